"""The real engine: an experiment file on real hosts, NetSpec's architecture.

- A daemon per host (``cellbench daemon``): a Dask distributed worker whose name
  is the testbed host's name; the first daemon may host the scheduler too.
- The controller (``cellbench run FILE --engine real``): a Dask client that
  resolves each test's ``own``/``peer`` through the testbed's host addresses,
  pins each connection's sink to its receiver's daemon and its source to its
  transmitter's, agrees a start time, and stores the reports as result rows.
- The agents are Rust (``cellbench-core``'s ``real`` module), off the GIL.
- The control channel is Dask's TLS with certificates that ``cellbench daemon
  --make-credentials DIR --hosts ...`` creates, one per party (controller,
  scheduler, each daemon): a controller without them runs nothing, and a daemon
  lets each party do only its role's part and runs nothing but its agents
  (``guard``).

Modules: ``credentials`` (TLS material), ``agents`` (what runs on a daemon),
``daemon`` (starting one, and giving up root), ``guard`` (what a daemon lets
through), ``plan`` (the experiment as connections and groups), ``controller``
(one run on the daemons, and its rows), ``measure`` (the hosts' evidence as
columns, the TCP_INFO series, and what bound each connection), ``columns`` (what its
rows add), ``tools`` (ttcp and netperf on real hosts). This package's face is the
engine the run loop drives (``RealEngine``): one run at a time on the real clock, each
connection's agents on its hosts' daemons.
"""

from __future__ import annotations

from cellbench.engines.base import OnTheClock, Option, Tables, check_line, engine_meta
from cellbench.engines.real.columns import REAL, REAL_CLOCK, REAL_RECEIVER
from cellbench.engines.real.plan import NOT_YET
from cellbench.engines.real.tools import CREDENTIALS, SCHEDULER, TOOL_OPTIONS, hosts
from cellbench.errors import UsageError


class RealEngine(OnTheClock):
    name = "real"
    label = "cellbench run (real)"
    about = "real hosts through their daemons (cellbench daemon --help)"
    options = (
        Option(
            "--host",
            dest="hosts",
            action="append",
            default=[],
            metavar="NAME=ADDRESS",
            help="--engine real: a testbed host's address (instead of its address = ...;)",
            refusal="--host is for --engine real; emulated hosts take the testbed's address",
        ),
        SCHEDULER,
        CREDENTIALS,
    )
    tool_options = TOOL_OPTIONS
    studies = False
    tools = True
    traffic_not_yet = NOT_YET
    columns = (REAL_CLOCK, REAL, REAL_RECEIVER)

    tool_hosts = staticmethod(hosts)

    def __init__(
        self,
        hosts: dict[str, str] | None = None,
        *,
        scheduler: str | None = None,
        credentials: str | None = None,
    ):
        """``hosts``: --host NAME=ADDRESS (over the testbed's addresses); ``scheduler``
        and ``credentials``: the daemons' scheduler and the TLS material."""
        self.hosts = hosts or {}
        self.scheduler, self.credentials = scheduler, credentials
        self.client = None

    @classmethod
    def from_options(cls, args) -> RealEngine:
        from cellbench.engines.real import plan as rplan

        hosts = rplan.parse_hosts(args.hosts)
        return cls(hosts, scheduler=args.scheduler, credentials=args.credentials)

    def check(self, plan) -> list[str]:
        """Every point's hosts resolved before anything connects: a bad address is a
        usage error."""
        from cellbench.engines.real import plan as rplan

        self.plan = plan
        self.exps = [rplan.build(e, self.hosts) for e in plan.experiments]
        return []

    def check_line(self, plan) -> str:
        e = self.exps[0]
        hosts = ", ".join(f"{h}={a}" for h, a in e.addresses.items())
        return check_line(plan, "engine real", len(e.connections), f" on {hosts}")

    def open(self) -> None:
        from cellbench.engines.real import controller

        if not self.scheduler or not self.credentials:
            raise UsageError(
                "--engine real needs --scheduler tls://HOST:PORT and --credentials DIR "
                "(see cellbench daemon --help)"
            )
        self.client = controller.connect(self.scheduler, self.credentials)

    def meta(self, plan) -> dict:
        addresses = self.exps[0].addresses
        real = {"scheduler": self.scheduler, "addresses": addresses}
        m = engine_meta(plan, "real", real=real)
        # Real hosts ran it: the file's testbed (a preset's switch, links and host
        # profiles) is the simulator's and was not used, so the result must not name it.
        hosts = ", ".join(f"{h}={a}" for h, a in addresses.items())
        m["testbed"] = dict(
            m["testbed"],
            name=f"real hosts ({hosts})",
            description="the experiment file's testbed settings (switch, links, host "
            "profiles) are the simulator's: real hosts ran it",
        )
        return m

    def begin(self, plan, store=None, dask=None) -> None:
        """Every host has a daemon of this version (its clock compared with ours), and
        every source is within its daemon's limits."""
        from cellbench.engines.real import controller

        hosts = sorted({h for e in self.exps for h in e.addresses})
        self.offsets = controller.check_daemons(self.client, hosts)
        controller.check_admitted(self.client, self.exps)

    def work(self, task) -> tuple:
        """The run on the daemons: its reports, and the controller's clock at its first
        start (so that started_s maps back to it)."""
        from cellbench.engines.real import controller

        run = controller._Run(
            self.client, self.exps[task.point], self.offsets, task, self.plan.series
        )
        try:
            origin = run.start()
        except (KeyboardInterrupt, controller.RealError):
            # Ctrl-C or a failure: every agent of this run, on every daemon still
            # there, ends within ~0.1 s.
            controller.stop_everywhere(self.client, run.group)
            raise
        return run, origin

    def tables(self, plan, task, out: tuple) -> Tables:
        from cellbench.engines.real import controller

        run, origin = out
        return Tables(
            controller.rows(plan, task, run, origin),
            cwnd=controller.series(task, run, origin),
            meta={"real": {"origins": {str(task.run): origin}}},
        )

    def connection_report(self, plan, out: tuple) -> dict:
        """The agents' reports of the one connection, in the simulator's keys (what the
        kernel granted as ``sndbuf_granted``, ``rcvbuf_granted``); the agents do not
        measure CPU time yet (no ttcp rusage line)."""
        from cellbench.engines.real import measure

        run, _ = out
        c = run.exp.connections[0].conn
        sent, got, _ = run.reports[c.index]
        limited_by, evidence = measure.explain(c.protocol, sent, got, None)
        nbytes = c.traffic.nbytes
        return {
            "transmitter": c.transmitter,
            "receiver": c.receiver,
            "completed": not got["timed_out"] and (nbytes is None or got["bytes"] == nbytes),
            "bytes": sent["bytes"],
            "sender_seconds": sent["seconds"],
            "writes": sent["blocks"],
            "bytes_received": got["bytes"],
            "receiver_seconds": got["seconds"],
            "reads": got["reads"],
            "sender_cpu_busy": None,
            "receiver_cpu_busy": None,
            "datagrams_sent": sent["blocks"],
            "datagrams_received": got["datagrams"],
            # The sender's kernel refused them (ENOBUFS): the sender's end alone.
            "pdus_dropped_at_adapter": sent["send_errors"],
            "pdus_dropped_at_sender_adapter": sent["send_errors"],
            # What the kernel granted, as netperf prints it (getsockopt after setting).
            "sndbuf_granted": sent.get("sndbuf_granted"),
            "rcvbuf_granted": got.get("rcvbuf_granted"),
            "limited_by": limited_by,
            "limit_evidence": evidence,
        }

    def close(self) -> None:
        from cellbench.engines.real import controller

        if self.client is not None:
            controller.disconnect(self.client)
            self.client = None


#: This package's engine (``engines.table`` finds it).
ENGINE = RealEngine
