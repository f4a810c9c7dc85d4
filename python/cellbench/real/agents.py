"""What runs on a daemon: the traffic agents (Rust, off the GIL) behind the
daemon's own limits, and the probes the controller asks before any traffic.

The controller sends plain specs (data); nothing from an experiment file is
executed here. A daemon refuses a spec beyond its limits, whoever sent it:

- a destination outside its allow list (``--allow``; loopback by default), so
  a file naming another network's address cannot aim traffic there;
- a transfer longer than ``--max-duration``;
- a paced rate above ``--max-rate``; a full-blast source is held below that
  rate by the agent itself (it waits whenever it is ahead of the cap).

The controller asks ``admit`` for every source of a run before any traffic, so
a refusal is one line naming the connection; ``source`` checks again itself.
"""

from __future__ import annotations

import ipaddress
import time

#: Set by ``cellbench daemon`` in its own process; the defaults hold elsewhere.
LIMITS = {
    "max_duration_s": 300.0,
    "max_rate_bps": 10e9,
    "allow": ["127.0.0.0/8", "::1/128"],
    "realtime": True,
}


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


def admit(specs: list[dict]) -> list[str | None]:
    """For each source spec, why it would be refused (None: it would run)."""
    return [refusal(s) for s in specs]


def source(spec: dict, limits: dict | None = None) -> dict:
    """Run a source agent within ``limits`` (the daemon's LIMITS by default; the
    emulator passes its own, allowing exactly the namespaces it made)."""
    from cellbench import _native

    limits = LIMITS if limits is None else limits
    why = refusal(spec, limits)
    if why:
        raise RefusedError(f"refused: {why}")
    spec = dict(spec, realtime=limits["realtime"], max_rate_bps=limits["max_rate_bps"])
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


def sources(specs: list[dict]) -> list[dict]:
    """A batch of sources on this host, one task for the controller to send."""
    return _each(source, specs)


def sinks(specs: list[dict]) -> list[dict]:
    """A batch of sinks on this host."""
    return _each(sink, specs)


def probe() -> dict:
    """This daemon's clock and version, for the controller's checks."""
    from cellbench import __version__

    return {"time": time.time(), "version": __version__}


def stop(group: str) -> None:
    """End every agent of the controller's run ``group`` on this daemon (Ctrl-C)."""
    from cellbench import _native

    _native.real_stop(group)
