"""`cellbench reproduce NAME`: run a classic study and compare with the published result."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from cellbench import engines
from cellbench.cli import reproduce_hetero
from cellbench.cli.common import (
    U64_MAX,
    UsageError,
    byte_count,
    check_workers,
    interrupted,
    positive_float,
    positive_int,
    print_json,
    seed,
)
from cellbench.data.published import size_label
from cellbench.experiment.runner import DASK_TIMEOUT_S, LOOKAHEAD_HELP
from cellbench.reproduce import (
    STUDIES,
    emu,
    lan_buffers,
    lan_ethernet,
    wan,
    wan_contention,
    wan_mismatch,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reproduce",
        help="run a classic TCP-over-ATM study and compare with the published result",
        description="Run a classic testbed on the simulator (docs/ in the repository has "
        "a page per study: its setup, mechanisms and published source).",
    )
    studies = p.add_subparsers(dest="name", metavar="STUDY")
    studies.required = True
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--seed", type=seed(), default=1, help="master seed (default 1)")
    common.add_argument(
        "--workers", type=int, default=0, help="worker threads (default: all cores)"
    )
    common.add_argument("--json", action="store_true", help="print JSON instead of the table")
    common.add_argument(
        "--report",
        type=Path,
        metavar="FILE.html",
        help="also write the study's result as one HTML page (as cellbench report does; "
        "with --out, of the result stored there)",
    )
    _lan_buffers(studies, common)
    reproduce_hetero.register(studies, common)
    for name, doc in WAN_STUDIES.items():
        w = studies.add_parser(name, parents=[common], help=doc, description=doc)
        if name in wan.EXPERIMENTS:
            _experiment_options(w, "runs per configuration (default 1)")
        else:
            w.add_argument(
                "--replications",
                type=positive_int("--replications"),
                default=1,
                help="runs per configuration (default 1)",
            )
        if name == "wan-mismatch":
            w.add_argument(
                "--part",
                action="append",
                choices=wan_mismatch.PARTS,
                help="run only this part (repeatable; default all): cases (1 and 2), case3 "
                "(the slides' Experiment 4: runs 3a and 3b), segment-size (Experiments 5, 6)",
            )
            w.add_argument(
                "--out",
                type=Path,
                help="store case 3's and Experiments 5 and 6's results in OUT/RUN (case3a, "
                "case3b, experiment-5, experiment-6; cellbench show/plot read them)",
            )
        if name == "europe-vp":
            w.add_argument(
                "--part",
                action="append",
                choices=EUROPE_VP_PARTS,
                help="vp: the policed VP's table (the default); tester: the adapter's own "
                "cells on a cell tester, both drivers' IAT histograms (repeatable; with "
                "both, --out DIR stores each in DIR/PART)",
            )
            w.add_argument(
                "--no-stall",
                dest="stall",
                action="store_false",
                help="without the adapter's 7-8-slot stall where a 1 KB cluster mbuf "
                "a PDU is gathered from ends (TCP from SunOS's 4 KB clusters meets few)",
            )
        _engine_options(w, name)
        w.set_defaults(func=wan_main)
    _wan_contention(studies, common)
    for study in studies.choices.values():
        study.set_defaults(func=_with_report(study.get_default("func")))


def _with_report(func):
    """A study's command with --report: the study stores its result (in a temporary
    directory without --out), then every result it stored goes on one page."""

    def run(args: argparse.Namespace) -> int:
        if args.report is None:
            return func(args)
        from cellbench.cli.report import check_output, write_report
        from cellbench.experiment import results

        check_output(args.report, "--report")
        if not hasattr(args, "out"):
            raise UsageError(
                f"--report: reproduce {args.name} runs its cases directly and stores no "
                "result to report (the studies that do: lan-buffers, hetero-lan, wan-window, "
                "europe-vp, wan-contention)"
            )
        if getattr(args, "trace", False):
            raise UsageError("--trace prints the transfers; it does not combine with --report")
        with tempfile.TemporaryDirectory(prefix="cellbench-reproduce-") as tmp:
            stored_by_user = args.out is not None
            if not stored_by_user:
                args.out = Path(tmp) / args.name
                args.out_for_report_only = True  # nothing to --resume after Ctrl-C
            status = func(args)
            if status:
                return status
            found = [results.load(p) for p in stored_results(args.out)]
            if not stored_by_user:
                for r in found:
                    r.path = None  # a temporary directory, gone when the page is written
            write_report(found, args.report, f"cellbench reproduce {args.name}")
        return 0

    return run


def stored_results(root: Path) -> list[Path]:
    """The result directories at or under ``root`` (a study with parts or pairs stores
    one per part, ``root/PART``), in name order."""
    if (root / "result.json").is_file():
        return [root]
    found = []
    for sub in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        found += stored_results(sub)
    return found


def _experiment_options(p: argparse.ArgumentParser, replications_help: str) -> None:
    """The options of a study that is an experiment file (reproduce.study)."""
    p.epilog = LOOKAHEAD_HELP
    p.add_argument(
        "--replications",
        type=positive_int("--replications"),
        default=None,
        help=replications_help,
    )
    p.add_argument("--out", type=Path, help="store the result there (cellbench show/plot read it)")
    p.add_argument(
        "--resume",
        action="store_true",
        help="finish an interrupted --out result, or repair a damaged one (re-runs exactly "
        "the runs missing or damaged)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing result in --out")
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on a Dask distributed scheduler (an error if it does not answer within "
        f"{DASK_TIMEOUT_S} s)",
    )
    p.add_argument(
        "--series",
        action="store_true",
        help="store cwnd and queue-occupancy time series with --out (plot --kind cwnd|queue)",
    )


def _engine_options(p: argparse.ArgumentParser, name: str) -> None:
    """--engine, and the options of a study on the emulator (reproduce.emu)."""
    p.add_argument(
        "--engine",
        choices=["sim", "emu"],
        default="sim",
        help="sim: the simulator (default); emu: this machine's Linux TCP in network "
        "namespaces over the emulated cells in real time (Linux, root), beside the "
        "simulator's result for the same cases"
        + ("" if name in emu.STUDIES else f" (not yet for {name})"),
    )
    g = p.add_argument_group("--engine emu")
    g.add_argument(
        "--kernel-cc",
        metavar="NAME",
        help="every host's kernel congestion control (cubic, reno, bbr, ...; default: "
        "the kernel's)",
    )
    g.add_argument(
        "--seconds",
        type=positive_float("--seconds"),
        help="each transfer's length in seconds (default: the emulated study's)",
    )
    g.add_argument(
        "--set",
        dest="emu_sets",
        action="append",
        metavar="KEY=VALUE",
        help="a value or list of the emulated study's experiment file, as cellbench run "
        "--set (e.g. window=16K,32K,48K); repeatable",
    )
    g.add_argument(
        "--full-grid",
        action="store_true",
        help="the study's whole grid (default: a part of it, said on stderr)",
    )
    g.add_argument("--no-sim", action="store_true", help="without the simulator's column")


def _check_engine_args(args: argparse.Namespace) -> None:
    """The emulator's options only with --engine emu: the simulator would ignore them."""
    if not engines.simulated(args.engine):
        return
    given = [
        flag
        for flag, on in (
            ("--kernel-cc", args.kernel_cc),
            ("--seconds", args.seconds),
            ("--set", args.emu_sets),
            ("--full-grid", args.full_grid),
            ("--no-sim", args.no_sim),
        )
        if on
    ]
    if given:
        raise UsageError(f"{', '.join(given)}: for --engine emu (the simulator runs the study)")


def _check_experiment_args(args: argparse.Namespace) -> None:
    check_workers(args.workers)
    if getattr(args, "resume", False) and args.out is None:
        raise UsageError("--resume needs --out DIR (the result to finish)")
    if getattr(args, "overwrite", False) and args.out is None:
        raise UsageError("--overwrite needs --out DIR (the result to replace)")
    if getattr(args, "series", False) and args.out is None:
        raise UsageError("--series needs --out DIR (the series are stored with the result)")


#: The WAN studies (cellbench.reproduce.wan) and what each is.
WAN_STUDIES = {
    "wan-window": "MAGIC WAN: throughput against window, two DEC Alphas on OC-3c, 8.8 ms RTT",
    "wan-mismatch": "MAGIC WAN: OC-3c senders into a TAXI receiver, with and without pacing",
    "europe-vp": "two LANs joined by a policed 23.42 Mb/s VP: adapter cell spacing against UPC",
}


#: europe-vp's parts: the policed VP's sweep, and the adapter's cells on a tester.
EUROPE_VP_PARTS = ("vp", "tester")


def wan_main(args: argparse.Namespace) -> int:
    _check_experiment_args(args)
    _check_engine_args(args)
    parts = getattr(args, "part", None) or ["vp"]
    if "tester" in parts:
        return _europe_vp_tester(args, both="vp" in parts)
    if not engines.simulated(args.engine):
        stall = {} if getattr(args, "stall", True) else {"testbed.host.sparc10-a.stall": 0}
        sim = {"seed": args.seed, "set": stall}
        return emu_main(args, sim, [f"{k}={v}" for k, v in stall.items()])
    if args.name == "wan-mismatch":
        return _wan_mismatch_main(args)
    options = {"stall": args.stall} if args.name == "europe-vp" else {}
    if args.name in wan.EXPERIMENTS:
        options |= {"out": args.out, "resume": args.resume, "overwrite": args.overwrite,
                    "dask": args.dask, "progress": True, "series": args.series}  # fmt: skip
    try:
        df = wan.run(
            args.name,
            replications=args.replications or 1,
            seed=args.seed,
            workers=args.workers,
            **options,
        )
    except KeyboardInterrupt as e:
        if getattr(args, "out", None) is None:
            raise
        return interrupted(args, args.out, e)
    if args.json:
        rows = df.astype(object).where(df.notna(), None).to_dict(orient="records")
        print_json({"study": args.name, "rows": rows})
    else:
        print(wan.report(args.name, df))
    return 0


def _wan_mismatch_main(args: argparse.Namespace) -> int:
    """Cases 1 and 2 (specs on the simulator), then the experiment-file parts."""
    check_workers(args.workers)
    parts = args.part or list(wan_mismatch.PARTS)
    if args.report is not None and not set(parts) - {"cases"}:
        raise UsageError(
            "--report: reproduce wan-mismatch --part cases runs its cases directly and stores "
            "no result to report (case3 and segment-size store theirs)"
        )
    df = None
    if "cases" in parts:
        df = wan.run("wan-mismatch", replications=args.replications or 1, seed=args.seed,
                     workers=args.workers)  # fmt: skip
    res = wan_mismatch.run(parts, seed=args.seed, workers=args.workers, out=args.out,
                           progress=True)  # fmt: skip
    if args.json:
        rows = [] if df is None else df.astype(object).where(df.notna(), None).to_dict("records")
        print_json({"study": args.name, "rows": rows} | res)
        return 0
    text = [] if df is None else [wan.report(args.name, df)]
    if res:
        text.append(wan_mismatch.report(res))
    print("\n\n".join(text))
    return 0


def _europe_vp_tester(args: argparse.Namespace, both: bool) -> int:
    """``reproduce europe-vp --part tester`` (and ``--part vp`` beside it)."""
    from cellbench.reproduce import tester

    given = [
        flag
        for flag, on in (
            ("--replications", args.replications),
            ("--resume", args.resume),
            ("--dask", args.dask),
            ("--series", args.series),
            ("--no-stall", not args.stall),
            (f"--engine {args.engine}", not engines.simulated(args.engine)),
        )
        if on
    ]
    if given and not both:
        raise UsageError(f"{', '.join(given)}: not for --part tester (one run per driver)")
    if given:
        raise UsageError(f"{', '.join(given)}: for --part vp alone (the tester part has none)")
    out = args.out
    vp = None
    if both:
        vp = wan.run(
            "europe-vp",
            seed=args.seed,
            workers=args.workers,
            out=None if out is None else out / "vp",
            overwrite=args.overwrite,
            progress=True,
        )
        out = None if out is None else out / "tester"
    parts = tester.run(
        seed=args.seed, workers=args.workers, out=out, overwrite=args.overwrite, progress=True
    )
    if args.json:
        doc = tester.to_json(parts)
        if vp is not None:
            rows = vp.astype(object).where(vp.notna(), None).to_dict(orient="records")
            doc = {"study": "europe-vp", "rows": rows, "tester": doc}
        print_json(doc)
        return 0
    if vp is not None:
        print(wan.report("europe-vp", vp))
        print()
    print(tester.report(parts))
    return 0


def _lan_buffers(studies: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = studies.add_parser(
        "lan-buffers",
        parents=[common],
        help="the ATM LAN send x receive buffer sweep (SunOS 4.1.1, the lock-steps)",
        description="Two SPARCstation IPCs on 100 Mb/s TAXI: ttcp 32 MB for every send x "
        "receive buffer pair, beside the published grid.",
    )
    _experiment_options(
        p,
        f"transfers per configuration (default: the study's, {lan_buffers.DEFAULT_REPLICATIONS})",
    )
    p.add_argument(
        "--send-buffer",
        type=byte_count("--send-buffer"),
        action="append",
        help="only this sender SO_SNDBUF (bytes); repeatable",
    )
    p.add_argument(
        "--recv-buffer",
        type=byte_count("--recv-buffer"),
        action="append",
        help="only this receiver SO_RCVBUF (bytes); repeatable",
    )
    p.add_argument(
        "--buflen",
        type=byte_count("--buflen"),
        default=8192,
        help="ttcp -l: bytes per write and per read (default 8192)",
    )
    p.add_argument(
        "--nbytes",
        type=byte_count("--nbytes", U64_MAX),
        default=lan_buffers.TRANSFER_BYTES,
        help="bytes per transfer (default 32 MB = 33554432)",
    )
    p.add_argument(
        "--mtu",
        type=byte_count("--mtu"),
        default=9188,
        help="IP MTU in bytes (default 9188, VC-mux 'Fore IP')",
    )
    p.add_argument("--profile", default="sparc-ipc", help="host profile (default sparc-ipc)")
    p.add_argument("--flavour", default="sunos411", help="TCP flavour (default sunos411)")
    p.add_argument("--nodelay", action="store_true", help="set TCP_NODELAY on the sender")
    p.add_argument(
        "--trace",
        action="store_true",
        help="print the segment trace of each transfer (tcpdump-like, with why each was sent)",
    )
    p.add_argument(
        "--part",
        action="append",
        choices=lan_ethernet.PARTS,
        help="instead of the buffer grid, the study's Ethernet parts (repeatable): ftp (the "
        "motivating example, a 4.4 MB file over the 10 Mb/s Ethernet and over ATM) or "
        "ethernet-footnote (Ethernet, 3K/6K buffers against 3K/3K and 6K/6K); with --out "
        "each is stored in OUT/PART",
    )
    _engine_options(p, "lan-buffers")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    _check_engine_args(args)
    if args.part:
        return _lan_ethernet_main(args)
    if not engines.simulated(args.engine):
        return _lan_buffers_emu(args)
    study = STUDIES[args.name]
    replications = args.replications or study.DEFAULT_REPLICATIONS
    sends = args.send_buffer or study.SIZES
    recvs = args.recv_buffer or study.SIZES
    if args.trace and (args.out or args.resume or args.dask):
        raise UsageError(
            "--trace prints the transfers; it does not combine with --out/--resume/--dask"
        )
    _check_experiment_args(args)
    try:
        df = study.run(
            send_buffers=sends,
            recv_buffers=recvs,
            replications=replications,
            seed=args.seed,
            workers=args.workers,
            out=args.out,
            resume=args.resume,
            overwrite=args.overwrite,
            dask=args.dask,
            trace=args.trace,
            series=args.series,
            progress=True,
            buflen=args.buflen,
            nbytes=args.nbytes,
            mtu=args.mtu,
            profile=args.profile,
            flavour=args.flavour,
            nodelay=args.nodelay,
        )
    except KeyboardInterrupt as e:
        if args.out is None:
            raise
        return interrupted(args, args.out, e)
    summary = study.summarize(df)
    if args.trace:
        for row in df.itertuples(index=False):
            print(
                f"# send {size_label(row.send_buffer)} recv {size_label(row.recv_buffer)} "
                f"replication {row.replication}: {row.throughput_mbit_ttcp:.3f} Mbit/s (2^20), "
                f"{'lock-step' if row.lockstep else 'no lock-step'}; "
                f"limited by {row.limited_by}: {row.limit_evidence}"
            )
            for line in row.trace:
                print(line)
            if row.cycle_pattern is not None:
                mbit = row.cycle_predicted_bps / 2**20
                cycle = " -> ".join(row.cycle_pattern)
                print(
                    f"# lock-step evidence: every {1e3 * row.cycle_period_s:.1f} ms the cycle "
                    f"[{cycle}] repeats ({row.cycle_repeats} times exactly); "
                    f"{row.cycle_bytes_per_tick:.0f} bytes released per timer tick -> "
                    f"{mbit:.4f} Mbit/s (2^20) predicted, {row.throughput_mbit_ttcp:.4f} measured"
                )
        return 0
    if args.json:
        print_json(study.to_json(summary))
    else:
        print(study.report(summary, replications, args.seed))
    return 0


def _lan_ethernet_main(args: argparse.Namespace) -> int:
    """``reproduce lan-buffers --part ftp|ethernet-footnote``: the Ethernet parts
    (reproduce.lan_ethernet), each an experiment file of its own; the grid's options
    do not apply to them."""
    given = [
        flag
        for flag, on in (
            ("--send-buffer", args.send_buffer),
            ("--recv-buffer", args.recv_buffer),
            ("--buflen", args.buflen != 8192),
            ("--nbytes", args.nbytes != lan_buffers.TRANSFER_BYTES),
            ("--mtu", args.mtu != 9188),
            ("--profile", args.profile != "sparc-ipc"),
            ("--flavour", args.flavour != "sunos411"),
            ("--nodelay", args.nodelay),
            ("--trace", args.trace),
            ("--replications", args.replications),
            ("--resume", args.resume),
            ("--dask", args.dask),
            ("--series", args.series),
            (f"--engine {args.engine}", not engines.simulated(args.engine)),
        )
        if on
    ]
    if given:
        raise UsageError(
            f"{', '.join(given)}: for the buffer grid, not for --part "
            f"{', '.join(args.part)} (its experiment file says its setup)"
        )
    check_workers(args.workers)
    if args.overwrite and args.out is None:
        raise UsageError("--overwrite needs --out DIR (the result to replace)")
    try:
        res = lan_ethernet.run(
            args.part,
            seed=args.seed,
            workers=args.workers,
            out=args.out,
            overwrite=args.overwrite,
            progress=True,
        )
    except KeyboardInterrupt as e:
        if args.out is None:
            raise
        return interrupted(args, args.out, e)
    if args.json:
        print_json(lan_ethernet.to_json(res))
    else:
        print(lan_ethernet.report(res))
    return 0


def _lan_buffers_emu(args: argparse.Namespace) -> int:
    """lan-buffers on the emulator: the study's options as the emulated file's values,
    and all of them for the simulator's column."""
    _check_experiment_args(args)
    if args.nbytes != lan_buffers.TRANSFER_BYTES:
        raise UsageError("--nbytes: emulated transfers are timed (--seconds S)")
    sets = []
    if args.send_buffer:
        sets.append("snd=" + ",".join(str(b) for b in args.send_buffer))
    if args.recv_buffer:
        sets.append("rcv=" + ",".join(str(b) for b in args.recv_buffer))
    if args.buflen != 8192:
        sets += [f"sender.type.blocksize={args.buflen}", f"receiver.type.blocksize={args.buflen}"]
    if args.mtu != 9188:
        sets.append(f"testbed.mtu={args.mtu}")
    if args.nodelay:
        sets.append("nodelay=1")
    sim = dict(
        buflen=args.buflen, mtu=args.mtu, profile=args.profile, flavour=args.flavour,
        nodelay=args.nodelay, seed=args.seed,
    )  # fmt: skip
    return emu_main(args, sim, sets)


def emu_main(args: argparse.Namespace, sim: dict, sets: list[str]) -> int:
    """``reproduce NAME --engine emu``: the emulated study beside the simulator's
    (``sim``: the simulator's study options), ``sets``: the study's own options as
    values of the emulated file."""
    name = args.name
    if name not in emu.STUDIES:
        raise UsageError(
            f"reproduce {name} is not available with --engine emu yet "
            f"(it is for: {', '.join(emu.STUDIES)})"
        )
    for flag in ("--dask", "--series", "--trace"):
        if getattr(args, flag[2:], None):
            raise UsageError(f"{flag} is not available with --engine emu yet")
    out = getattr(args, "out", None)
    try:
        df = emu.run(
            name,
            sets=sets + (args.emu_sets or []),
            full_grid=args.full_grid,
            seconds=args.seconds,
            kernel_cc=args.kernel_cc,
            replications=args.replications,
            seed=args.seed,
            out=out,
            resume=getattr(args, "resume", False),
            overwrite=getattr(args, "overwrite", False),
            sim=None if args.no_sim else sim,
            workers=args.workers,
        )
    except KeyboardInterrupt as e:
        if out is None:
            raise
        return interrupted(args, out, e)
    if args.json:
        rows = df.astype(object).where(df.notna(), None).to_dict(orient="records")
        print_json({"study": name, "engine": "emu", "rows": rows})
    else:
        print(emu.report(name, df))
    return 0


def _wan_contention(studies: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    doc = "several transfers sharing WAN links: offered load, credits, burst, five pairs, ftp"
    p = studies.add_parser("wan-contention", parents=[common], help=doc, description=doc)
    p.add_argument(
        "--part",
        action="append",
        choices=wan_contention.PARTS,
        help="run only this part (repeatable; default all)",
    )
    p.add_argument(
        "--out",
        type=Path,
        help="store each part's result in OUT/PART (cellbench show/plot read it)",
    )
    p.set_defaults(func=wan_contention_main)


def wan_contention_main(args: argparse.Namespace) -> int:
    check_workers(args.workers)
    res = wan_contention.run(
        args.part, seed=args.seed, workers=args.workers, out=args.out, progress=True
    )
    if args.json:
        print_json(res)
    else:
        print(wan_contention.report(res))
    return 0
