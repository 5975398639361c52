# Writes the source file that names the commit tritonforge is built from (src/util/build_info.h).
# Run as a build step (cmake -P) on every build, so that a new commit or an edit shows in
# `tritonforge --version` without configuring again; the file is rewritten only when its text
# changes, so an unchanged tree recompiles nothing.
#
# Inputs: SOURCE_DIR (the checkout), TEMPLATE (build_info.cpp.in), OUTPUT (the .cpp to write).
# The commit is `git rev-parse --short HEAD`, with "-dirty" when tracked files differ from it;
# "unknown" where SOURCE_DIR is not the top of a git checkout (an unpacked sdist, a tarball),
# so that a checkout that merely contains the sources never lends them its commit.
set(TF_COMMIT "unknown")
find_program(TF_GIT git)
if(TF_GIT)
  execute_process(COMMAND "${TF_GIT}" -C "${SOURCE_DIR}" rev-parse --show-toplevel
                  OUTPUT_VARIABLE top RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SOURCE_DIR}" src)
  endif()
  if(rc EQUAL 0 AND top STREQUAL src)
    execute_process(COMMAND "${TF_GIT}" -C "${SOURCE_DIR}" rev-parse --short HEAD
                    OUTPUT_VARIABLE head RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
      set(TF_COMMIT "${head}")
      # --no-optional-locks: never take the index lock, which a git command the user runs at
      # the same moment would then find held.
      execute_process(COMMAND "${TF_GIT}" --no-optional-locks -C "${SOURCE_DIR}" status --porcelain
                              --untracked-files=no
                      OUTPUT_VARIABLE changes RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(rc EQUAL 0 AND NOT changes STREQUAL "")
        string(APPEND TF_COMMIT "-dirty")
      endif()
    endif()
  endif()
endif()
configure_file("${TEMPLATE}" "${OUTPUT}" @ONLY)
