# Type stubs for the private native module (kept in step with crates/cellbench-py).

__version__: str

# --- wire (crates/cellbench-py/src/wire.rs) ---
from typing import Any

def hec(header4: bytes) -> int: ...
def aal5_crc32(data: bytes) -> int: ...
def aal5_cells_for(payload_len: int) -> int: ...
def wire_encode(
    payload: bytes, vpi: int, vci: int, encap: str = "llc-snap", clp: int = 0
) -> list[bytes]: ...
def pcap_write(
    path: str,
    payload: bytes,
    vpi: int,
    vci: int,
    encap: str = "llc-snap",
    clp: int = 0,
    pdus: bool = False,
    start_ps: int = 0,
) -> int: ...
def pcap_read(path: str) -> list[dict[str, Any]]: ...

class CellDecoder:
    def __init__(self, encap: str = "llc-snap") -> None: ...
    def push(self, cell: bytes) -> tuple[bytes | None, str | None]: ...
    def finish(self) -> None: ...

# --- end wire ---
