"""tritonforge worker: compiles, launches, verifies and times Triton kernels for the C++ core.

The C++ core starts `python3 -m tritonforge_worker` and speaks JSON lines on its stdin and
stdout (docs/worker-protocol.md). Nothing here decides anything about optimization: the
worker parses, compiles, runs and measures, and reports facts.
"""

PROTOCOL_VERSION = 1
WORKER_VERSION = "0.1.0"
