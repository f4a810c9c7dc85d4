"""The emulator engine (``--engine emu``, Linux, as root): every testbed host is a
network namespace whose kernel TCP is the one measured; the datagrams between them
cross the simulator's own ATM network (adapters, links, switch ports, UPC) in real
time, through one TUN device per namespace (``cellbench-core``'s ``emu`` module). One
run at a time on the real clock, each in namespaces of its own.

Modules: ``netns`` (namespaces, TUN addresses, kernel settings; all removed on every
exit), ``engine`` (one run: the emulator, the real engine's agents in the namespaces,
the stored rows), ``kernel`` (the kernels' window and timeouts, and the simulator's
window rule on them), ``columns`` (what its rows add). This package's face is the engine
the run loop drives (``EmuEngine``; ``cellbench run FILE --engine emu``).
"""

from __future__ import annotations

import argparse
import sys

from cellbench.engines.base import OnTheClock, Option, Tables, check_line, engine_meta
from cellbench.engines.emu.columns import EMU, EMU_KERNEL
from cellbench.engines.real.columns import REAL, REAL_CLOCK, REAL_RECEIVER
from cellbench.engines.real.plan import NOT_YET
from cellbench.errors import UsageError


def stall_seconds(text: str) -> float:
    """``--stall-timeout S``'s value: seconds, 0 or more."""
    try:
        s = float(text)
    except ValueError:
        s = -1.0
    if not (0 <= s < float("inf")):
        raise argparse.ArgumentTypeError(f"{text!r}: expected seconds, 0 or more (0: never)")
    return s


def check_platform() -> None:
    if sys.platform != "linux":
        raise UsageError("--engine emu needs Linux (network namespaces and TUN devices)")


class EmuEngine(OnTheClock):
    name = "emu"
    label = "cellbench run (emu)"
    about = (
        "this machine's Linux TCP in network namespaces over the emulated ATM network, in "
        "real time (Linux, as root)"
    )
    options = (
        Option(
            "--pcap",
            metavar="PORT=FILE",
            help="--engine emu: write the cells leaving a switch port (its name in the ports "
            "table, e.g. a host's name for the port to it, or its number) to FILE as a pcap "
            "of ERF ATM cells, as `wire pcap` writes (FILE-runN.pcap with several runs)",
            # The simulator carries cell counts, not bytes; the emulator the datagrams.
            refusal="--pcap needs --engine emu: only the emulator carries the cells' bytes",
        ),
        Option(
            "--stall-timeout",
            metavar="S",
            type=stall_seconds,
            help="--engine emu: end a TCP connection that delivers nothing for S seconds "
            "(completed = false, limited_by from the network's counts, the run kept; 0: "
            "never; default 30); while one runs, a progress line every 5 s",
            refusal="--stall-timeout needs --engine emu",
        ),
    )
    studies = True
    tools = False
    # Its connections are the real engine's agents (engines/real/plan.build).
    traffic_not_yet = NOT_YET
    # The real engine's agents run in its namespaces: their clock and evidence too.
    columns = (REAL_CLOCK, REAL, EMU, REAL_RECEIVER, EMU_KERNEL)

    def __init__(
        self,
        *,
        drain_s: float | None = None,
        pcap: str | None = None,
        stall_s: float | None = None,
    ):
        """``drain_s``: how long a sink waits for the rest after a timed source's end
        (None: the engine's). ``pcap``: ``--pcap PORT=FILE``. ``stall_s``:
        ``--stall-timeout`` (None: ``STALL_TIMEOUT_S``; 0: never)."""
        from cellbench.engines.emu import engine

        check_platform()
        self.drain_s, self.pcap = drain_s, pcap
        self.stall_s = engine.STALL_TIMEOUT_S if stall_s is None else stall_s

    @classmethod
    def from_options(cls, args) -> EmuEngine:
        return cls(pcap=args.pcap, stall_s=args.stall_timeout)

    def check(self, plan) -> list[str]:
        from cellbench.engines.emu import engine
        from cellbench.engines.real import plan as rplan

        self.plan = plan
        self.exps = []
        for e in plan.experiments:
            engine.check_frames(e)
            self.exps.append(rplan.build(e, engine.addresses(e), adapters_pace=True))
        # A PORT=FILE that names no port fails here, before anything is made.
        engine.pcap_target(self.pcap, plan.task(0).spec, 0, plan.runs_total)
        return sorted(set(plan.notes) | set(engine.notes(plan.experiments[0])))

    def check_line(self, plan) -> str:
        return check_line(plan, "engine emu", len(self.exps[0].connections))

    def open(self) -> None:
        from cellbench.engines.emu import netns

        netns.check_privileges()

    def meta(self, plan) -> dict:
        return engine_meta(plan, "emu")

    def begin(self, plan, store, dask=None) -> None:
        pass

    def work(self, task) -> Tables:
        from cellbench.engines.emu import engine

        return engine.run_one(
            self.plan,
            task,
            self.exps[task.point],
            drain_s=self.drain_s,
            pcap=self.pcap,
            stall_s=self.stall_s,
        )

    def tables(self, plan, task, out: Tables) -> Tables:
        return out

    @staticmethod
    def summary_lines(result) -> list[str]:
        """The emulator's lateness, and whether it kept real time."""
        df = result.to_pandas()
        if df.empty or "lateness_p99_us" not in df:
            return []
        runs = df.drop_duplicates("run")
        worst = runs.loc[runs["lateness_p99_us"].idxmax()]
        out = [
            f"# emulator lateness (actual minus ideal delivery of each PDU), worst run: "
            f"p50 {worst['lateness_p50_us']:.1f} µs, p99 {worst['lateness_p99_us']:.1f} µs, "
            f"max {worst['lateness_max_us']:.1f} µs"
        ]
        import pandas as pd

        causes = ("write", "read", "sleep", "other")
        if all(pd.notna(worst.get(f"emu_late_{k}")) for k in causes):
            n = {k: int(worst[f"emu_late_{k}"]) for k in causes}
            out.append(
                f"#   its PDUs later than one cell time: {sum(n.values())} of "
                f"{int(worst['emu_pdus_timed'])}, fell due while the emulator was writing "
                f"another {n['write']}, reading {n['read']}, asleep {n['sleep']}, "
                f"other {n['other']}"
            )
        if "sender_tx_dropped" in df:
            from cellbench.engines.emu.netns import TXQUEUELEN

            held = df[df["sender_tx_dropped"].fillna(0) > 0].drop_duplicates(["run", "transmitter"])
            if len(held):
                per = held.groupby("transmitter", sort=False)["sender_tx_dropped"].sum()
                out.append(
                    "# dropped by the sending hosts' kernels at their interfaces (TUN txqueuelen "
                    f"{TXQUEUELEN}) while their adapters' interface queues were full, all runs: "
                    + ", ".join(f"{h} {int(n)}" for h, n in per.items())
                )
        late = runs[runs["real_time"] == False]  # noqa: E712 - a nullable column
        if len(late):
            out.append(
                f"# NOT REAL-TIME: {len(late)} of {len(runs)} run(s) had a p99 lateness above "
                "one cell time of the slowest link; their timing (RTT, cell spacing, queueing) "
                "is not the testbed's: rerun on an idle machine"
            )
        return out


#: This package's engine (``engines.table`` finds it).
ENGINE = EmuEngine
