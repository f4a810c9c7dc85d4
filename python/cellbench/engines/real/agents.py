"""What runs on a daemon: the traffic agents (Rust, off the GIL) behind the
daemon's own limits, and the probes the controller asks before any traffic.

The controller sends plain specs (data); nothing from an experiment file is
executed here, and a daemon runs no task but these entry points (``TASKS``, held
to that by ``guard``), each of which checks its specs as data first
(``spec_refusal``: known fields, types, ranges). A daemon refuses a spec beyond its
limits, whoever sent it:

- a destination outside its allow list (``--allow``; loopback by default), so
  a file naming another network's address cannot aim traffic there;
- a transfer longer than ``--max-duration``;
- a paced rate above ``--max-rate``, or a batch of paced sources whose rates add
  up to more.

``set_limits`` gives the same limits to the agents themselves (Rust,
``real::limits``), once, in the daemon's process: a source sends only inside the
allow list and ends at ``--max-duration``, and all the daemon's sources together
stay under ``--max-rate`` (one rate cap shared by every write, so a full blast is
held below it too), whatever a spec says and however it arrived.

The controller asks ``admit`` for every source of a run before any traffic, so
a refusal is one line naming the connection; ``source`` checks again itself.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import math
import time

#: Set by ``cellbench daemon`` in its own process (``set_limits``); the defaults
#: hold elsewhere. ``agents``: the most agents one batch may start (--agents).
LIMITS = {
    "max_duration_s": 300.0,
    "max_rate_bps": 10e9,
    "allow": ["127.0.0.0/8", "::1/128"],
    "realtime": True,
    "agents": 512,
}
#: The bounds of --max-duration and --max-rate, as the agents' own limits hold them
#: (Rust ``real::limits::MAX_DURATION_LIMIT_S``, ``MIN_RATE_LIMIT_BPS``, where they are
#: explained; tests/test_real_guard.py holds the two sides to the same numbers).
MAX_DURATION_LIMIT_S = 30 * 86_400.0
MIN_RATE_LIMIT_BPS = 1e3
#: Whether this process set its limits in the agents themselves (``set_limits``).
_PROCESS_LIMITS = False


class RefusedError(RuntimeError):
    """The daemon will not run this spec."""


def _host_of(peer: str) -> str:
    """``1.2.3.4:5`` or ``[v6]:5`` -> the address."""
    return peer[1:].partition("]")[0] if peer.startswith("[") else peer.rpartition(":")[0]


def offered_bps(spec: dict) -> float | None:
    """A paced source's rate, bit/s (None: full blast)."""
    p = spec.get("period_us")
    return spec["blocksize"] * 8 / (p * 1e-6) if p else None


def refusal(spec: dict, limits: dict | None = None) -> str | None:
    """Why this daemon (or whoever runs the agent, with its own ``limits``) will not run
    a source ``spec``, or None."""
    limits = LIMITS if limits is None else limits
    addr = ipaddress.ip_address(_host_of(spec["peer"]))
    nets = [ipaddress.ip_network(n) for n in limits["allow"]]
    if not any(addr in n for n in nets if n.version == addr.version):
        return (
            f"destination {addr} is not in its allow list ({', '.join(limits['allow'])}); "
            f"start the daemon with --allow {addr} (or a network) to permit it"
        )
    cap = limits["max_duration_s"]
    if (spec.get("duration_s") or 0) > cap:
        return f"duration {spec['duration_s']:g} s exceeds its --max-duration {cap:g} s"
    rate, max_rate = offered_bps(spec), limits["max_rate_bps"]
    if rate is not None and rate > max_rate * (1 + 1e-9):
        return f"rate {rate / 1e6:g} Mb/s exceeds its --max-rate {max_rate / 1e6:g} Mb/s"
    # A byte count lasts at least this long at its paced rate, or at the rate cap.
    fastest = rate if rate is not None else max_rate
    if spec.get("nbytes") and spec["nbytes"] * 8 / fastest > cap:
        return (
            f"{spec['nbytes']} bytes take at least {spec['nbytes'] * 8 / fastest:g} s at "
            f"{fastest / 1e6:g} Mb/s, longer than its --max-duration {cap:g} s"
        )
    return None


def set_limits(**limits) -> None:
    """This process's limits, here and in the agents themselves (once per process)."""
    from cellbench import _native

    global _PROCESS_LIMITS
    LIMITS.update(limits)
    _PROCESS_LIMITS = True
    _native.real_limits(
        {k: LIMITS[k] for k in ("allow", "max_duration_s", "max_rate_bps", "realtime")}
    )


def answers_in_json(task):
    """A task entry point whose answer crosses to the controller as JSON bytes: plain
    data the controller loads as data (``controller.decode``), never an object it would
    have to unpickle (guard's ``CONTROLLER_PICKLE_GLOBALS`` allow bytes alone)."""

    @functools.wraps(task)
    def answer(*args) -> bytes:
        return json.dumps(task(*args)).encode()

    return answer


@answers_in_json
def admit(specs: list[dict]) -> list[str | None]:
    """For each source spec, why it would be refused (None: it would run)."""
    why = spec_refusal(specs, SOURCE_FIELDS)
    if why:
        return [why] * _count(specs)
    return [refusal(s) for s in specs]


def source(spec: dict, limits: dict | None = None) -> dict:
    """Run a source agent within ``limits`` (the daemon's LIMITS by default; the
    emulator passes its own, allowing exactly the namespaces it made)."""
    from cellbench import _native

    limits = LIMITS if limits is None else limits
    why = refusal(spec, limits)
    if why:
        raise RefusedError(f"refused: {why}")
    spec = dict(spec, realtime=limits["realtime"])
    if not _PROCESS_LIMITS:
        # Elsewhere (the emulator) the spec carries the cap; a daemon's is its process's.
        spec["max_rate_bps"] = limits["max_rate_bps"]
    return _native.real_source(spec)


def sink(spec: dict) -> dict:
    from cellbench import _native

    spec = dict(spec)
    # A sink waits at most the daemon's cap, whatever the controller asked.
    spec["deadline_at"] = min(spec["deadline_at"], time.time() + LIMITS["max_duration_s"] + 60)
    return _native.real_sink(spec)


def _each(agent, specs: list[dict]) -> list[dict]:
    """Run ``agent`` on every spec at once, a thread each (the agents release the GIL);
    each one's ``{"report": ...}`` or ``{"error": "..."}``, in order."""
    from concurrent.futures import ThreadPoolExecutor

    def one(spec: dict) -> dict:
        try:
            return {"report": agent(spec)}
        except Exception as e:
            return {"error": str(e)}

    if len(specs) == 1:
        return [one(specs[0])]
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        return list(pool.map(one, specs))


@answers_in_json
def sources(specs: list[dict]) -> list[dict]:
    """A batch of sources on this host, one task for the controller to send."""
    why = spec_refusal(specs, SOURCE_FIELDS)
    if why is None:
        paced = sum(offered_bps(s) or 0.0 for s in specs)
        cap = LIMITS["max_rate_bps"]
        if paced > cap * (1 + 1e-9):
            why = (
                f"refused: the batch's paced rates add up to {paced / 1e6:g} Mb/s, above its "
                f"--max-rate {cap / 1e6:g} Mb/s"
            )
    if why:
        return [{"error": why}] * _count(specs)
    return _each(source, specs)


@answers_in_json
def sinks(specs: list[dict]) -> list[dict]:
    """A batch of sinks on this host."""
    why = spec_refusal(specs, SINK_FIELDS)
    if why:
        return [{"error": why}] * _count(specs)
    return _each(sink, specs)


def _is_ip(v) -> bool:
    try:
        ipaddress.ip_address(v)
        return True
    except ValueError:
        return False


def _is_socket_address(v) -> bool:
    host = _host_of(v)
    port = v.rpartition(":")[2]
    return _is_ip(host) and port.isdigit() and 0 < int(port) < 65536


def _is_plain(v, depth: int = 0) -> bool:
    """JSON-like data only (a random-rate law's parameters), nested a few levels."""
    if v is None or isinstance(v, bool | int | str):
        return not isinstance(v, str) or len(v) <= 64
    if isinstance(v, float):
        return math.isfinite(v)
    if depth < 4 and isinstance(v, list | tuple):
        return len(v) <= 16 and all(_is_plain(x, depth + 1) for x in v)
    if depth < 4 and isinstance(v, dict):
        return len(v) <= 32 and all(
            isinstance(k, str) and _is_plain(x, depth + 1) for k, x in v.items()
        )
    return False


def _num(lo: float, hi: float, integer: bool = False):
    def ok(v) -> bool:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return False
        if integer and not isinstance(v, int):
            return False
        return math.isfinite(v) and lo <= v <= hi

    ok.expected = f"{'an integer' if integer else 'a number'} in [{lo:g}, {hi:g}]"
    return ok


def _one_of(*values):
    def ok(v) -> bool:
        return v in values

    ok.expected = f"one of {', '.join(map(str, values))}"
    return ok


def _kind(test, expected: str):
    def ok(v) -> bool:
        return test(v)

    ok.expected = expected
    return ok


_IP = _kind(lambda v: isinstance(v, str) and _is_ip(v), "an IP address")
_SOCKET = _kind(lambda v: isinstance(v, str) and _is_socket_address(v), "ADDRESS:PORT")
_BOOL = _kind(lambda v: isinstance(v, bool), "true or false")
_GROUP = _kind(lambda v: isinstance(v, str) and 0 < len(v) <= 64, "a run's id")
_NAME = _kind(
    lambda v: isinstance(v, str) and 0 < len(v) <= 16 and v.replace("_", "").isalnum(),
    "a congestion control's name",
)
_BUFFER = _num(1, 2**31 - 1, integer=True)
#: An instant (epoch s) a day either side of now at most.
_INSTANT = _num(0, 1e11)
#: The largest write (the experiment language's MAX_BLOCK, 1 MiB).
_BLOCK = _num(1, 1 << 20, integer=True)

#: A source spec's fields as the controller writes them (controller.specs), each
#: with what it must be; None is allowed for those marked optional.
SOURCE_FIELDS = {
    "protocol": (_one_of("tcp", "udp"), False),
    "bind": (_IP, True),
    "peer": (_SOCKET, False),
    "sndbuf": (_BUFFER, True),
    "nodelay": (_BOOL, True),
    "blocksize": (_BLOCK, False),
    "period_us": (_num(1e-3, 1e9), True),
    "nbytes": (_num(1, 2**63 - 1, integer=True), True),
    "duration_s": (_num(1e-6, 1e9), True),
    "start_at": (_INSTANT, True),
    "group": (_GROUP, True),
    "congestion": (_NAME, True),
    "mss": (_num(1, 65535, integer=True), True),
    "random": (_kind(lambda v: isinstance(v, dict) and _is_plain(v), "a random-rate law"), True),
    "series_interval_us": (_num(100, 1e9), True),
}
SINK_FIELDS = {
    "protocol": (_one_of("tcp", "udp"), False),
    "bind": (_SOCKET, False),
    "rcvbuf": (_BUFFER, True),
    "blocksize": (_BLOCK, False),
    "deadline_at": (_INSTANT, False),
    "group": (_GROUP, True),
}


def _count(specs) -> int:
    """How many answers a refused batch gets (one, when it is not a list)."""
    return max(1, min(len(specs), LIMITS["agents"])) if isinstance(specs, list) else 1


def spec_refusal(specs, fields: dict) -> str | None:
    """Why ``specs`` is not a list of dicts of known ``fields``, each value what it must
    be, or None. (Returned, not raised: an entry point answers with data, never with an
    exception for its caller to unpickle.)"""
    if not isinstance(specs, list) or not 0 < len(specs) <= LIMITS["agents"]:
        return f"refused: expected a list of 1 to {LIMITS['agents']} agent specs"
    for spec in specs:
        if not isinstance(spec, dict):
            return f"refused: an agent spec is a dict, not {type(spec).__name__}"
        for key, value in spec.items():
            if key not in fields:
                return f"refused: unknown field {key!r} in an agent spec"
            ok, optional = fields[key]
            if value is None and optional:
                continue
            if not ok(value):
                return f"refused: {key} = {value!r:.60}: expected {ok.expected}"
        missing = [k for k, (_, optional) in fields.items() if not optional and k not in spec]
        if missing:
            return f"refused: an agent spec without {missing[0]}"
    return None


def _plain_args(args) -> bool:
    return all(_is_plain(a) or _plain_list(a) for a in args)


def _plain_list(a) -> bool:
    # A batch of specs: longer than _is_plain's lists, each spec checked by its agent.
    return isinstance(a, list) and all(_is_plain(x) for x in a)


def task_refusal(run_spec) -> str | None:
    """Why a daemon will not run this task (a dask Task), or None: it must call an
    agent entry point on plain data."""
    from dask._task_spec import Task

    if type(run_spec) is not Task:
        return f"a {type(run_spec).__name__} is not an agent's task"
    if run_spec.func not in TASKS:
        return f"{getattr(run_spec.func, '__name__', run_spec.func)!r} is not a cellbench agent"
    if run_spec.kwargs or run_spec.dependencies or not _plain_args(run_spec.args):
        return "an agent's arguments are plain data only"
    return None


@answers_in_json
def refuse(why: str) -> dict:
    """What a refused task runs in its place: the refusal, as its result."""
    return {"refused": f"refused by the daemon: {why}"}


@answers_in_json
def probe() -> dict:
    """This daemon's clock and version, for the controller's checks."""
    from cellbench import __version__

    return {"time": time.time(), "version": __version__}


def stop(group: str) -> None:
    """End every agent of the controller's run ``group`` on this daemon (Ctrl-C)."""
    from cellbench import _native

    _native.real_stop(group)


#: The functions a daemon runs as tasks (``guard``): nothing else.
TASKS = (sources, sinks, admit, probe)
