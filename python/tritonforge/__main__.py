"""`python -m tritonforge ARGS`: the same as the `tritonforge` command."""

import sys

from ._launcher import main

if __name__ == "__main__":
    sys.exit(main())
