"""A package of kernels for the capture tests: its module imports a sibling relatively, as
installed libraries do, so that a replay task must load its copy inside the package."""
