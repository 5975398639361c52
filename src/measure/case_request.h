// The worker request that runs one case of a task on a variant of its source: the seeds and
// checks of the task's [check], its launcher and harness. The search's evaluator, `profile`
// and the Nsight Compute runner all start from it.
#pragma once

#include <cstddef>

#include "task/task.h"
#include "worker/worker_client.h"

namespace tf {

// Untimed, without compiled texts: callers set `timing` and `asm_texts` as they need.
RunRequest caseRunRequest(const Task& task, const VariantRef& variant, size_t case_index);

}  // namespace tf
