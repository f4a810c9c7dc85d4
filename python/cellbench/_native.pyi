# Type stubs for the private native module (kept in step with crates/cellbench-py).

__version__: str
