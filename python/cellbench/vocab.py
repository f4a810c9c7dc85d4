"""The simulator's words, as the Rust core defines them (``_native.vocabulary()``,
crates/cellbench-core/src/sim/vocabulary.rs): the named physical layers, the drop
policies, what can bound a connection, a spec's defaults and limits, the fibre's
delay, and every field of a simulator result with its unit. The experiment checks,
the testbeds and the result store read them here rather than keep copies.
"""

from __future__ import annotations

from typing import Any

from cellbench import _native

_V: dict[str, Any] = _native.vocabulary()

#: The physical layers a host or trunk names (``rate:<Mb/s>`` gives any other rate).
PHYS: tuple[str, ...] = tuple(_V["phys"])
#: A host's Ethernet interface: its named physical layers (``ethernet:<Mb/s>`` gives any
#: other rate), the interfaces a connection may use (atm, ethernet), Ethernet II's MTU.
ETHERNET_PHYS: tuple[str, ...] = tuple(_V["ethernet"]["phys"])
INTERFACES: tuple[str, ...] = tuple(_V["ethernet"]["interfaces"])
ETHERNET_MTU: int = _V["ethernet"]["mtu"]
#: The rates ``ethernet:<Mb/s>`` may name, Mb/s (the core's ``ether::MBPS_RANGE``).
ETHERNET_MBPS: tuple[float, float] = tuple(_V["ethernet"]["mbps_range"])  # type: ignore[assignment]
#: The bytes each encapsulation puts before a datagram in its AAL5 PDU: RFC 1483's
#: LLC/SNAP header, or none with VC multiplexing (the core's ``Encap::header_len``).
ENCAP_HEADER: dict[str, int] = {e["name"]: e["header"] for e in _V["encaps"]}
#: Each encapsulation's default IP MTU (the core's ``Encap::default_mtu``).
ENCAP_MTU: dict[str, int] = {e["name"]: e["default_mtu"] for e in _V["encaps"]}
#: The MTUs a run spec takes with VC multiplexing (``sim/world/validate.rs``): at least
#: RFC 791's 576, the datagram every host accepts, and at most what one AAL5 PDU carries;
#: an encapsulation's header comes off the upper bound.
MTU_RANGE: tuple[int, int] = tuple(_V["limits"]["mtu"])  # type: ignore[assignment]
#: A switch port's drop policies.
POLICIES: tuple[str, ...] = tuple(_V["policies"])
#: Every ``limited_by`` a connection can have (what bound it).
LIMIT_CATEGORIES: tuple[str, ...] = tuple(_V["limit_categories"])
#: The shares at which the simulator's rules say a bound binds (sim/explain/limits.rs:
#: ``application``, ``link``, ``acr_drift``, ``cpu_busy``, ``window``, ``window_closed``,
#: ``nagle_hold``), for the engines that judge by the same rules.
LIMIT_SHARES: dict[str, float] = _V["limit_shares"]
#: What an omitted key of a run spec reads as, per part: ``run``, ``switch``,
#: ``abr_switch`` (ERICA's target and interval), ``host``, ``trunk``, ``upc``,
#: ``connection``, ``traffic`` (every type's: blocksize, nbytes, duration_s, blocks,
#: request, response).
DEFAULTS: dict[str, dict[str, Any]] = _V["defaults"]
#: Every key of a run spec's records (``sim/spec_keys.rs``), by (record, key): kind,
#: unit, range ([least, most], the least excluded when ``above``), choices, a note on a
#: bound another key sets, and the default (None: none, or the key is required).
SPEC_KEYS: dict[tuple[str, str], dict[str, Any]] = {
    (k["record"], k["name"]): k for k in _V["spec_keys"]
}
#: The largest write and UDP datagram (bytes) and the longest time (s) a spec may give.
LIMITS: dict[str, Any] = _V["limits"]
#: Propagation in fibre, picoseconds per metre (5 µs per km).
FIBRE_PS_PER_M: int = _V["constants"]["fibre_ps_per_m"]
#: The same in seconds per metre.
FIBRE_S_PER_M: float = FIBRE_PS_PER_M / 1e12
#: Every field of a simulator result: record (``run``, ``connection``,
#: ``lockstep_cycle``, ``trace``, ``port``, ``policer``, ``cells``), name, kind (int,
#: float, bool, string, strings, record, records, columns, series), unit, and for a
#: nested field the record of its items.
RESULT_FIELDS: list[dict[str, Any]] = _V["result_fields"]
#: The nested and list kinds: stored as tables or records of their own, not as a column.
NESTED_KINDS = ("record", "records", "columns", "series")


def spec_key(record: str, key: str) -> dict[str, Any]:
    """One key of a run spec's record, as ``SPEC_KEYS`` gives it."""
    return SPEC_KEYS[(record, key)]


def choices(record: str, key: str) -> tuple[str, ...]:
    """The names a run spec's key takes."""
    return tuple(SPEC_KEYS[(record, key)]["choices"])


def spec_range(record: str, key: str) -> tuple[float, float]:
    """The range of a run spec's key: (least, most)."""
    least, most = SPEC_KEYS[(record, key)]["range"]
    return least, most


def fields(record: str) -> list[dict[str, Any]]:
    """One record's fields, in the vocabulary's order."""
    return [f for f in RESULT_FIELDS if f["record"] == record]


def _limit(name: str) -> str:
    if name not in LIMIT_CATEGORIES:
        raise ImportError(f"the simulator has no limit category {name!r}: {LIMIT_CATEGORIES}")
    return name


#: The limit categories by name, for the engines that classify connections themselves.
APPLICATION = _limit("application")
LOCKSTEP = _limit("lockstep")
ABR_RATE = _limit("abr-rate")
LINK = _limit("link")
HOST_CPU = _limit("host-cpu")
WINDOW = _limit("window")
POLICING = _limit("policing")
CELL_LOSS = _limit("cell-loss")
INTERFACE_QUEUE = _limit("interface-queue")
CAPTURE = _limit("capture")
NAGLE = _limit("nagle")
UNDETERMINED = _limit("undetermined")
TIME_LIMIT = _limit("time-limit")
EVENT_BUDGET = _limit("event-budget")
