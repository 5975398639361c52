#include "transform/transform_flags.h"

namespace tf {

void addTransformFlags(CLI::App& app, TransformRequest& req) {
  app.add_option("--kernel", req.kernel, "The kernel to transform (default: the source's only kernel)");
  app.add_option("--pass", req.pass, "The pass and its parameters: NAME[:key=value,...] (see --list)");
  app.add_option("--signature", req.signature,
                 "Parameter types for the sm_90 compile check: a_ptr=*fp16,M=i32,BLOCK=128 (ints: constexpr values)");
  app.add_option("--task", req.task, "A task file: its [signature.KERNEL] types and [check] tolerances");
  app.add_option("--rtol", req.rtol, "The relative tolerance the result must meet (gates lossy passes)");
  app.add_option("--atol", req.atol, "The absolute tolerance the result must meet (gates lossy passes)");
  app.add_option("--no-pass", req.switched_off, "Switch a pass off (repeatable; names may be comma separated)")
      ->delimiter(',');
  app.add_flag("!--no-compile", req.compile, "Skip the sm_90 compile check");
}

}  // namespace tf
