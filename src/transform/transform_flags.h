// The flags of `tritonforge transform`, defined once: the CLI command and the golden tests
// (whose `args` files hold these flags) both parse through addTransformFlags.
#pragma once

#include <CLI/CLI.hpp>

#include "transform/transform.h"

namespace tf {

void addTransformFlags(CLI::App& app, TransformRequest& req);

}  // namespace tf
