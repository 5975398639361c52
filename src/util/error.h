// Failure kinds (STYLE.md): a programmer error is an assert; bad user input is a
// UserError carried to the CLI, which prints one line and exits 2; a failure of the
// environment (no python3, a tool that will not start) is an EnvironmentError, exit 1.
// An expected candidate failure (compile error, wrong result, timeout) is never an
// exception: it is a status value (see measure/status.h).
#pragma once

#include <stdexcept>
#include <string>

namespace tf {

class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tf
