"""The controller: run a plan's experiments on the daemons and store the rows.

One Dask client; each connection's sink goes to its receiver's daemon and its
source to its transmitter's (``workers=[host]``, never elsewhere). A group's
connections get one start time a little in the future (the sinks listen from
the moment their task starts; a source connects at the start time and retries
a refused connection briefly), and a serial group's next child is given its
start time only once the previous child's every agent has reported.

Clocks: each daemon's clock is compared with the controller's before any
traffic (the midpoint of a round trip); start times are sent on the daemon's
clock and reports come back onto the controller's, as seconds from the run's
first start (``started_s``/``ended_s``).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid

from cellbench.engines.real import agents, answers, credentials, guard, measure
from cellbench.engines.real import plan as rplan
from cellbench.engines.rows import connection_row, ident
from cellbench.engines.walk import walk
from cellbench.errors import EngineError

#: Time from handing a group to the daemons to its agreed start.
START_MARGIN_S = 0.1
#: ... and per connection in the group (tasks reach the daemons one by one).
START_MARGIN_PER_CONNECTION_S = 0.0005
#: A TCP sink waits this long after its source's duration before giving up.
DRAIN_S = 30.0
#: How often a waiting controller checks that the daemons are still there, s.
DAEMON_CHECK_S = 1.0
#: How long an agent's error waits for the scheduler to report a peer daemon's death, s.
PEER_DEATH_S = 2.0


class RealError(EngineError):
    """A daemon missing, refusing or failing: one line, naming the host and connection."""


def connect(scheduler: str, creds: str):
    """A client of the daemons' scheduler; refused without matching credentials. From
    here until ``disconnect`` this process unpickles nothing a daemon could use to run
    code here (guard's ``CONTROLLER_PICKLE_GLOBALS``): whoever holds a daemon's or the
    scheduler's key can send back data, and only data."""
    from distributed import Client

    sec = credentials.security(creds)
    if not scheduler.startswith("tls://"):
        raise RealError(f"--scheduler {scheduler}: expected tls://HOST:PORT (the channel is TLS)")
    before = guard.install_unpickler(guard.controller_loads)
    # A refused pickle is Dask's "Failed to deserialize" with its traceback on the
    # terminal; the refusal is said once, in one line, by ``answer``.
    protocol_log = logging.getLogger("distributed.protocol")
    level = protocol_log.level
    protocol_log.setLevel(logging.CRITICAL + 1)
    try:
        client = Client(scheduler, security=sec, timeout="10s", set_as_default=False)
    except (OSError, TimeoutError) as e:
        guard.install_unpickler(before)
        protocol_log.setLevel(level)
        raise RealError(f"cannot reach the scheduler at {scheduler}: {e}") from None
    client.cellbench_restore = (before, level)
    return client


def disconnect(client) -> None:
    """Close ``connect``'s client and give the process its unpickler (and Dask's
    protocol log) back."""
    client.close()
    before, level = client.cellbench_restore
    guard.install_unpickler(before)
    logging.getLogger("distributed.protocol").setLevel(level)


def answer(future, host: str, what: str, check, *args, timeout: float | None = None):
    """A daemon's answer to a task, checked as data by ``check`` (``answers``): an
    answer that is not JSON of the right shape (an object Dask would unpickle, which
    the controller's unpickler refuses) is a one-line RealError naming the host."""
    try:
        raw = future.result(timeout=timeout)
    except guard.RefusedPickle as e:
        raise RealError(
            f"the daemon for host {host} answered {what} with a pickle naming {e.name}, "
            f"which a controller refuses (a daemon answers in JSON data): is host {host} "
            "compromised?"
        ) from None
    except TimeoutError:
        raise RealError(
            f"the daemon for host {host} did not answer {what} in {timeout:g} s"
        ) from None
    try:
        return check(raw, *args)
    except answers.BadAnswer as e:
        raise RealError(f"the daemon for host {host} answered {what}: {e}") from None


def live_daemons(client) -> set[str]:
    """The names of the daemons the scheduler has now. Asked of the scheduler itself:
    Client.scheduler_info() returns a cache that a periodic refresh empties of workers,
    so a thread could read it between the two and see no daemon at all."""
    identity = client.sync(client.scheduler.identity, n_workers=-1)
    return {w.get("name") for w in identity["workers"].values()}


def check_daemons(client, hosts: list[str]) -> dict[str, float]:
    """Every host has a daemon of this version; returns each one's clock offset (s)."""
    from cellbench import __version__

    names = live_daemons(client)
    missing = [h for h in hosts if h not in names]
    if missing:
        raise RealError(
            f"no daemon for host {missing[0]} at the scheduler (daemons: "
            f"{', '.join(sorted(str(n) for n in names)) or 'none'}); start one: "
            f"cellbench daemon --name {missing[0]} --scheduler ... --credentials ..."
        )
    offsets = {}
    for h in hosts:
        t0 = time.time()
        r = client.submit(agents.probe, workers=[h], allow_other_workers=False, pure=False)
        got = answer(r, h, "the probe", answers.probe, timeout=10)
        t1 = time.time()
        if got["version"] != __version__:
            raise RealError(
                f"the daemon for host {h} runs cellbench {got['version']}, this controller "
                f"{__version__}: run one version everywhere"
            )
        offsets[h] = got["time"] - (t0 + t1) / 2
    return offsets


def _peer(exp: rplan.RealExperiment, rc: rplan.RealConnection) -> str:
    """The sink's socket address, as the agents parse it."""
    a = exp.addresses[rc.conn.receiver]
    return f"[{a}]:{rc.port}" if ":" in a else f"{a}:{rc.port}"


def source_spec(exp: rplan.RealExperiment, rc: rplan.RealConnection) -> dict:
    """A connection's source, all but its start time and run."""
    c, t = rc.conn, rc.conn.traffic
    return {
        "protocol": c.protocol,
        "bind": exp.addresses[c.transmitter],
        "peer": _peer(exp, rc),
        "sndbuf": rc.sndbuf,
        "nodelay": c.nodelay,
        "blocksize": t.blocksize,
        "period_us": t.period_us if t.type != "full" else None,
        "nbytes": t.nbytes,
        "duration_s": t.duration_s if t.nbytes is None else None,
    }


def specs(
    exp: rplan.RealExperiment,
    i: int,
    start_at: float,
    offsets: dict[str, float],
    draws: dict,
    group: str,
    *,
    series: bool = False,
    drain_s: float = DRAIN_S,
) -> tuple[dict, dict]:
    """Connection ``i``'s sink and source, on their hosts' clocks (``offsets``): the
    real engine's and the emulator's agents take the same specs. ``draws``: the run's
    seed and replication, which random-rate traffic follows."""
    rc = exp.connections[i]
    c = rc.conn
    t = c.traffic
    wait = t.duration_s + drain_s if t.duration_s is not None else 1e9
    sink = {
        "protocol": c.protocol,
        "bind": _peer(exp, rc),
        "rcvbuf": rc.rcvbuf,
        "blocksize": c.receiver_blocksize,
        "deadline_at": start_at + offsets[c.receiver] + wait,
        "group": group,
    }
    source = source_spec(exp, rc) | {
        "start_at": start_at + offsets[c.transmitter],
        "group": group,
        "congestion": c.congestion,
        "mss": c.mss,
        "random": rplan.random_spec(c, draws),
        "series_interval_us": measure.SERIES_INTERVAL_US if series else None,
    }
    if source["random"] and "blocksize" in source["random"]:
        source["blocksize"] = rplan.largest_block(c)
    return sink, source


def check_admitted(client, exps: list[rplan.RealExperiment]) -> None:
    """Every source within its daemon's limits (destinations, duration, rate), asked of
    the daemons themselves before any traffic: a refusal names the connection."""
    by_host: dict[str, list[tuple[str, dict]]] = {}
    for e in exps:
        for rc in e.connections:
            c = rc.conn
            where = f"connection {c.name} ({c.transmitter} -> {c.receiver})"
            by_host.setdefault(c.transmitter, []).append((where, source_spec(e, rc)))
    futures = {
        h: client.submit(
            agents.admit, [s for _, s in items], workers=[h], allow_other_workers=False, pure=False
        )
        for h, items in by_host.items()
    }
    for h, f in futures.items():
        whys = answer(f, h, "the admission", answers.admissions, len(by_host[h]), timeout=30)
        for (where, _), why in zip(by_host[h], whys):
            if why:
                raise RealError(f"{where}: the daemon for host {h} refuses: {why}")


class _Run:
    """One run: the group tree on the daemons (``walk``; this is its ``Starts``), a
    report pair per connection."""

    def __init__(
        self,
        client,
        exp: rplan.RealExperiment,
        offsets: dict[str, float],
        task,
        series: bool = False,
    ):
        self.client = client
        self.exp = exp
        self.offsets = offsets
        #: The simulator's seed and replication: random-rate draws follow them.
        self.draws = {"seed": task.spec["seed"], "replication": task.spec["replication"]}
        self.series = series
        self.reports: dict[int, tuple[dict, dict, float]] = {}
        self.lock = threading.Lock()
        #: Names this run's agents, so that a stop reaches exactly them.
        self.group = uuid.uuid4().hex
        self.live: set[str] = set()
        self.live_at = float("-inf")

    def start(self) -> float:
        n = len(self.exp.connections)
        origin = time.time() + self.margin(n)
        walk(self.exp.root, origin, self)
        return origin

    def margin(self, n: int) -> float:
        return START_MARGIN_S + START_MARGIN_PER_CONNECTION_S * n

    def stop(self) -> None:
        stop_everywhere(self.client, self.group)

    def specs(self, i: int, start_at: float) -> tuple[dict, dict]:
        """Connection ``i``'s sink and source, on their daemons' clocks."""
        return specs(
            self.exp, i, start_at, self.offsets, self.draws, self.group, series=self.series
        )

    def launch(self, conns: list[int], start_at: float) -> tuple:
        """Hand connections to their daemons: one task per host for its sinks, then one
        per host for its sources (a task per agent costs the scheduler and the daemons
        milliseconds each, and the start must wait for the last to arrive)."""
        batches: dict[tuple[str, str], list[tuple[int, dict]]] = {}
        for i in conns:
            c = self.exp.connections[i].conn
            sink, source = self.specs(i, start_at)
            batches.setdefault(("sink", c.receiver), []).append((i, sink))
            batches.setdefault(("source", c.transmitter), []).append((i, source))
        key = uuid.uuid4().hex[:12]
        futures = {}
        for role in ("sink", "source"):
            for (r, host), items in batches.items():
                if r == role:
                    futures[(role, host)] = self.client.submit(
                        agents.sinks if role == "sink" else agents.sources,
                        [spec for _, spec in items],
                        workers=[host],
                        allow_other_workers=False,
                        key=f"{role}s-{host}-{key}",
                    )
        return start_at, batches, futures

    def finish(self, job: tuple) -> None:
        """Wait for a submitted batch's reports and keep them."""
        start_at, batches, futures = job
        got: dict[tuple[str, int], dict] = {}
        # Sources first: a failed source leaves its sink waiting for its deadline.
        order = sorted(futures.items(), key=lambda kv: kv[0][0] != "source")
        try:
            for (role, host), f in order:
                conns = [i for i, _ in batches[(role, host)]]
                for i, report in zip(conns, self.wait(f, conns, role, host)):
                    got[(role, i)] = report
        except RealError:
            for f in futures.values():
                f.cancel()
            raise
        with self.lock:
            for (role, i), report in got.items():
                if role == "source":
                    self.reports[i] = (report, got[("sink", i)], start_at)

    def where(self, i: int) -> str:
        c = self.exp.connections[i].conn
        return f"connection {c.name} ({c.transmitter} -> {c.receiver})"

    def wait(self, future, conns: list[int], role: str, host: str) -> list[dict]:
        """A batch's reports. A task pinned to a daemon that died would wait for it
        for ever: the daemons are looked at every second, and a failure names the
        first connection on the daemon that is gone, else the agent's own error."""
        hosts = {h: i for i in reversed(conns) for h in self.hosts(i)}
        # Waiting with a done-callback rather than result(timeout=): distributed's
        # sync() can end a timed wait on a cancelled inner future and then fail with
        # an unbound local (seen with 100+ connections waiting at once).
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        while not done.wait(DAEMON_CHECK_S):
            gone = self.gone(hosts)
            if gone:
                raise RealError(f"{self.where(hosts[gone])}: {_gone(gone)}")
        try:
            outs = answer(future, host, f"its {role}s", answers.reports, len(conns), role)
        except RealError:
            raise
        except Exception as e:
            outs = [{"error": str(e)}] * len(conns)
        for i, out in zip(conns, outs):
            if "error" not in out:
                continue
            # An agent's error is often the echo of its peer's daemon dying (a reset
            # connection): the scheduler learns of the death a moment later, so ask it
            # afresh for a while before blaming the agent.
            mine = {h: i for h in self.hosts(i)}
            deadline = time.monotonic() + PEER_DEATH_S
            gone = self.gone(mine, fresh=True)
            while gone is None and time.monotonic() < deadline:
                time.sleep(0.1)
                gone = self.gone(mine, fresh=True)
            why = _gone(gone) if gone else f"the {role} on host {host}: {out['error']}"
            raise RealError(f"{self.where(i)}: {why}")
        return [out["report"] for out in outs]

    def hosts(self, i: int) -> tuple[str, str]:
        c = self.exp.connections[i].conn
        return c.transmitter, c.receiver

    def gone(self, hosts, fresh: bool = False) -> str | None:
        """The first of ``hosts`` whose daemon the scheduler no longer has."""
        with self.lock:
            # One question to the scheduler a second, however many connections wait.
            if fresh or time.monotonic() - self.live_at > DAEMON_CHECK_S / 2:
                self.live = live_daemons(self.client)
                self.live_at = time.monotonic()
            live = self.live
        return next((h for h in hosts if h not in live), None)


def stop_everywhere(client, group: str) -> None:
    """End every agent of the run ``group`` on every daemon still there: the daemons'
    own stop operation (guard), which the scheduler broadcasts; Dask's Client.run,
    which runs any function on them, a daemon refuses."""
    client.sync(
        client.scheduler.broadcast, msg={"op": "cellbench-stop", "group": group}, on_error="ignore"
    )


def _gone(host: str) -> str:
    return (
        f"the daemon for host {host} is gone (it died or was stopped); finished "
        "runs are kept: restart it and run again with --resume"
    )


def receiver_clock(protocol: str, got: dict, shift: float) -> dict:
    """What the sink's interval (``receiver_seconds``) measured: from accept() over TCP,
    as ttcp -r's clock (real/sink.rs), from the first datagram over UDP; where it began
    on the run's clock (``shift`` takes the receiver's epoch time there), and the reads'
    own span. A daemon from before the sink timed from accept reports no accept: its
    interval began at the first read."""
    accepted, first = got.get("accepted_at"), got.get("first_at")
    if accepted is not None:
        clock = "accept"
    else:
        clock = "first datagram" if protocol == "udp" else "first read"
    began = accepted if accepted is not None else first
    return {
        "receiver_clock": clock,
        "receiver_started_s": None if began is None else began - shift,
        "receiver_read_seconds": got.get("read_seconds"),
    }


def rows(plan, task, run: _Run, origin: float) -> list[dict]:
    """One stored row per connection, in the simulator's columns where they apply."""
    params = plan.param_values(task.point)
    out = []
    for rc in run.exp.connections:
        c, t = rc.conn, rc.conn.traffic
        sent, got, start_at = run.reports[c.index]
        off_tx, off_rx = run.offsets[c.transmitter], run.offsets[c.receiver]
        info = sent.get("tcp_info") or {}
        timing = sent.get("timing") or {}
        ends = [sent["ended_at"] - off_tx]
        if got.get("last_at") is not None:
            ends.append(got["last_at"] - off_rx)
        row = connection_row(plan, task, c, params, rc.sndbuf, rc.rcvbuf)
        limited_by, evidence = measure.explain(c.protocol, sent, got, row["offered_bps"])
        row |= {
            "start_s": start_at - origin,
            "completed": not got["timed_out"] and (t.nbytes is None or got["bytes"] == t.nbytes),
            "bytes": got["bytes"],
            "sender_seconds": sent["seconds"],
            "receiver_seconds": got["seconds"],
            "throughput_bps": measure.throughput_bps(c.protocol, sent, got),
            "throughput_mbit_ttcp": measure.throughput_bps(c.protocol, sent, got) / 2**20,
            "goodput_bps": got["throughput_bps"],
            "sender_bps": sent["throughput_bps"],
            "retransmitted_segments": info.get("total_retrans"),
            # The key the real and emulated engines' contracts name (same count).
            "retransmits": info.get("total_retrans"),
            "datagrams_sent": sent["blocks"] - sent["send_errors"] if c.protocol == "udp" else None,
            "datagrams_received": got["datagrams"] if c.protocol == "udp" else None,
            "datagrams_dropped_no_buffer": sent["send_errors"] if c.protocol == "udp" else None,
            "limited_by": limited_by,
            "limit_evidence": evidence,
            "engine": "real",
            "started_s": sent["started_at"] - off_tx - origin,
            "ended_s": max(ends) - origin,
            "late_blocks": timing.get("late_blocks"),
            "timing_error_p50_us": timing.get("error_p50_us"),
            "timing_error_p99_us": timing.get("error_p99_us"),
            **measure.columns(c.protocol, sent, got),
            "timing_error_max_us": timing.get("error_max_us"),
            "pacing_realtime": timing.get("realtime"),
            **receiver_clock(c.protocol, got, off_rx + origin),
        }
        out.append(row)
    return out


def series(task, run: _Run, origin: float) -> list[dict]:
    """The senders' TCP_INFO samples (--series) in the cwnd table, on the run's clock."""
    out: list[dict] = []
    for rc in run.exp.connections:
        c = rc.conn
        sent = run.reports[c.index][0]
        out += measure.series_rows(ident(task), c.index, sent, run.offsets[c.transmitter] + origin)
    return out
