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

# --- calc (crates/cellbench-py/src/calc.rs) ---
def calc_phy(phy: str, framing: bool = True) -> tuple[float, float, float, float]: ...
def calc_layers(
    phy: str, encap: str = "llc-snap", mtu: int | None = None, framing: bool = True
) -> tuple[list[tuple[str, float]], int, int, int]: ...
def calc_buffer_burst(buffer_cells: int, in_cell_us: float, out_cell_us: float) -> int | None: ...
def calc_gcra_burst(
    t_us: float, tau_us: float, cell_us: float
) -> tuple[int, float, float] | None: ...
def calc_train(
    cells_per_pdu: int,
    cell_us: float,
    gap_us: float,
    t_us: float,
    tau_us: float,
    pdus: int | None = None,
) -> tuple[tuple[int, int, float] | None, int | None]: ...
def calc_window(
    window_bytes: int, rtt_ms: float, rate_mbps: float | None = None
) -> tuple[float, float, str, int | None]: ...

# --- end calc ---
def calc_window_model(
    window_bytes: int, mss: int, rtt_ms: float, rate_mbps: float
) -> list[tuple[str, int, float, str]]: ...

# --- simulator (crates/cellbench-py/src/sim.rs) ---
def lan_buffers_spec(
    send_buffer: int,
    recv_buffer: int,
    *,
    seed: int = 1,
    replication: int = 0,
    trace: bool = False,
    buflen: int = 8192,
    nbytes: int = 33554432,
    profile: str = "sparc-ipc",
    nodelay: bool = False,
    mtu: int = 9188,
    flavour: str = "sunos411",
    port_buffer_cells: int = 256,
) -> dict[str, Any]: ...

DEFAULT_EVENT_BUDGET: int

def simulate(spec: dict[str, Any] | str) -> dict[str, Any]: ...
def simulate_many(
    specs: list[dict[str, Any] | str], *, workers: int = 0
) -> list[dict[str, Any]]: ...

# The simulator's vocabulary (crates/cellbench-core/src/sim/vocabulary.rs): keys
# phys, ethernet, policies, limit_categories, defaults, spec_keys, encaps, limits,
# constants, result_fields.
def vocabulary() -> dict[str, Any]: ...

class SpecError(ValueError):
    """A run spec the simulator refuses (``ScenarioError``); ``kind``: what is refused
    (``setting``, ``conflict``, ``record``, ``spec``, ``run``); ``path``: where the spec
    holds the value (record, index, name, key, value; a record's refusal: key and value
    empty), or None; ``other``: a conflict's second setting, else None."""

    kind: str
    path: dict[str, Any] | None
    other: dict[str, Any] | None

def tcp_flavours() -> list[tuple[str, int]]: ...
def tcp_max_windows() -> list[tuple[str, int]]: ...
def host_profiles() -> list[str]: ...

# A profile's loopback ttcp over its OS's loopback MTU (001 Table 2's calibration): (Mb/s,
# that MTU); Moldeklev et al.'s SPARCstation 10 pair (002 §2.2's ~70, the SBA-200 work's).
def host_loopback_mbps(name: str) -> tuple[float, int]: ...
def sparc10_pair_mbps() -> float: ...

# Host adapter models (docs/design.md §5): (name, [(spacing mode, PDU gap µs, stall, source)]).
def adapter_models() -> list[tuple[str, list[tuple[str, float, bool, str]]]]: ...

# The real engine's traffic agents (Linux): a spec dict in, a report dict out;
# both block until the transfer ends, with the GIL released. OSError on a
# socket failure, ValueError on a bad spec.
def real_source(spec: dict[str, Any] | str) -> dict[str, Any]: ...
def real_sink(spec: dict[str, Any] | str) -> dict[str, Any]: ...
def real_stop(group: str) -> None: ...
def real_limits(limits: dict[str, Any]) -> None: ...

# --engine emu (Linux): the emulator and a thread's move into a network namespace.
def emu_setns(path: str) -> None: ...
def port_labels(spec: dict[str, Any] | str) -> list[str]: ...
def tester_places(spec: dict[str, Any] | str, place: str | None = None) -> list[str]: ...
def connection_ports(spec: dict[str, Any] | str) -> list[list[str]]: ...
def pcap_cell_iats(
    path: str, slot_ps: int, vpi: int | None = None, vci: int | None = None
) -> dict[str, Any]: ...

class Emulator:
    def __init__(self, spec: dict[str, Any] | str) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> dict[str, Any]: ...
    def close(self) -> None: ...
