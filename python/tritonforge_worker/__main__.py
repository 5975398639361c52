import sys

if __name__ == "__main__":
    if "--oneshot" in sys.argv[1:]:
        from .oneshot import main as oneshot_main
        sys.exit(oneshot_main(sys.argv[1:]))
    from .server import main
    main()
