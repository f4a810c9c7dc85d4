"""`cellbench run FILE`, `cellbench show RESULT`, `cellbench plot RESULT`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cellbench.cli.common import (
    UsageError,
    check_workers,
    interrupted,
    positive_int,
    print_json,
    seed,
)
from cellbench.engines import table as engine_table
from cellbench.engines.cluster import DASK_TIMEOUT_S
from cellbench.engines.loop import LOOKAHEAD_HELP
from cellbench.experiment.results import contention
from cellbench.units import byte_count


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run an experiment file (NetSpec-style) on the simulator and store the result",
        description="Run every sweep point x replication of an experiment file; each finished "
        "run is stored at once in the result directory (--out). " + LOOKAHEAD_HELP,
    )
    p.add_argument("file", help="the experiment file")
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a variable or path (TEST.key[.arg], testbed.key); VALUE may be a,b,c (a list) "
        "or start:stop:step (a range, stop included); repeatable",
    )
    p.add_argument("--replications", type=positive_int("--replications"), help="runs per point")
    p.add_argument("--seed", type=seed(), help="master seed (default: the file's, else 1)")
    p.add_argument("--testbed", help="a testbed preset name or a file with a testbed { } block")
    p.add_argument(
        "--out",
        type=Path,
        help="result directory (default: FILE's name with .result, in the current directory)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="finish an interrupted --out result, or repair a damaged one (re-runs exactly "
        "the runs missing or damaged)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing result in --out")
    p.add_argument("--workers", type=int, default=0, help="parallel runs (default: all cores)")
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on a Dask distributed scheduler (an error if it does not answer within "
        f"{DASK_TIMEOUT_S} s)",
    )
    p.add_argument("--trace", action="store_true", help="store every connection's segment trace")
    p.add_argument(
        "--series",
        action="store_true",
        help="store time series: each TCP sender's cwnd/ssthresh/flight, each port's queue "
        "(--engine real: the kernel's TCP_INFO every 10 ms, with srtt)",
    )
    p.add_argument(
        "--cells",
        metavar="PLACE",
        help="an ATM cell tester: record every cell leaving PLACE (a switch output port by "
        "its name in the ports table: a host's name for the port to it, 'trunk A->B'; or "
        "adapter:HOST for the cells HOST's adapter sends) into OUT/cells/runN.pcap, ERF ATM "
        "cells as --pcap writes them, with its link's cell time in runN.pcap.json (cellbench "
        "cells reads both); over the file's tester { port = ...; } block",
    )
    p.add_argument(
        "--cells-runs",
        metavar="RUNS",
        help="record cells in these runs only (numbers and ranges as show numbers them, "
        "from 0: 0-9,17); the others run without a tester",
    )
    p.add_argument(
        "--cells-max",
        type=byte_count("--cells-max", hi=1 << 62),
        metavar="SIZE",
        help="the most the cell captures may take (K, M, G suffixes; default 10G); a sweep "
        "whose captures would take more, or more than the free space, is refused before "
        "it runs (--check prints the estimate)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--check", action="store_true", help="only parse and check the file")
    p.add_argument(
        "--engine",
        choices=list(engine_table.NAMES),
        default=engine_table.DEFAULT,
        help=engine_table.help_text(),
    )
    # Each engine's own options, as it declares them (``Engine.options``).
    for option in engine_table.run_options():
        p.add_argument(*option.flags, **option.argparse)
    p.set_defaults(func=run_main)

    s = sub.add_parser("show", help="print a stored result", description="Print a stored result.")
    s.add_argument("result", type=Path, help="a result directory")
    s.add_argument(
        "--format",
        choices=["table", "csv", "json"],
        default="table",
        help="table: summary per point and connection; csv: every row; json: metadata and rows",
    )
    s.set_defaults(func=show_main)

    from cellbench.plots import kinds

    q = sub.add_parser(
        "plot",
        help="plot a stored result",
        description="Plot a stored result (no re-running).",
        epilog=kinds.help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    q.add_argument(
        "result",
        type=Path,
        help="a result directory (--kind iat: also a capture, FILE.pcap)",
    )
    q.add_argument(
        "--kind", required=True, choices=kinds.NAMES, help="the figure kind (listed below)"
    )
    q.add_argument("-o", "--output", type=Path, required=True, help="FILE.png, .svg or .pdf")
    q.add_argument(
        "--run",
        type=int,
        help=f"{', '.join(kinds.of('run') + kinds.of('capture'))}: the run "
        "(default: the first recorded)",
    )
    q.add_argument(
        "--connection",
        type=int,
        default=None,
        help=f"{kinds.picking('connection')}: the connection",
    )
    q.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"{kinds.picking('port')}: one port (default: all that queued)",
    )
    q.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="draw only the runs where a parameter (or row column) has this value; repeatable",
    )
    q.add_argument(
        "--by", metavar="KEY", help="one line (one grid panel) per value of this parameter"
    )
    q.add_argument(
        "--compare",
        choices=["published"],
        help=f"{', '.join(k.name for k in kinds.KINDS if k.compare)}: the published value "
        "and the error per cell (lan-buffers)",
    )
    q.set_defaults(func=plot_main)

    from cellbench.cli import report

    report.register(sub)


def make_plan(args: argparse.Namespace, **options):
    """The plan of `run FILE` on any engine: the file with --set, --replications,
    --seed and --testbed; ``options``: what the engine records besides (trace, series)."""
    from cellbench.experiment.plan import make_plan

    return make_plan(
        Path(args.file),
        sets=args.sets,
        replications=args.replications,
        seed=args.seed,
        testbed=args.testbed,
        file=args.file,
        progress=True,
        **options,
    )


def _given(args: argparse.Namespace, option: str) -> bool:
    """Whether ``run``'s option ``option`` (its argparse name) was given: a flag on, a
    value (0 too), a list not empty."""
    value = getattr(args, option)
    return value is not None and value is not False and value != [] and value != ""


def _engine(args: argparse.Namespace):
    """The engine ``--engine`` names, made from its options; an option it does not
    take is a usage error (``Engine.options``)."""
    why = engine_table.refused(args.engine, lambda option: _given(args, option))
    if why is not None:
        raise UsageError(why)
    if args.cells and args.dask:
        raise UsageError("--cells writes its captures where a run executes: not with --dask")
    return engine_table.get(args.engine).from_options(args)


def run_main(args: argparse.Namespace) -> int:
    from cellbench.engines import loop

    check_workers(args.workers)
    engine = _engine(args)
    plan = make_plan(
        args, trace=args.trace, series=args.series, cells=args.cells,
        cells_runs=args.cells_runs, cells_max=args.cells_max,
    )  # fmt: skip
    out = args.out or Path(Path(args.file).stem + ".result")
    try:
        ran = loop.run_plan(
            plan,
            out,
            engine,
            resume=args.resume,
            overwrite=args.overwrite,
            check=args.check,
            workers=args.workers or None,
            dask=args.dask,
        )
    except KeyboardInterrupt as e:
        return interrupted(args, out, e)
    if ran:
        print_result(out, plan, args.json)
    return 0


def print_result(out: Path, plan, as_json: bool = False) -> None:
    """After a run, every engine alike: where the result is, what the cell testers
    wrote, and the summary."""
    from cellbench.experiment import results

    result = results.load(out)
    print(f"cellbench: result in {out} ({result.num_rows} rows)", file=sys.stderr)
    print_captures(plan)
    _print_summary(result, "json" if as_json else "table")


def print_captures(plan) -> None:
    """What each run's cell tester wrote, one line per capture (the first few) on stderr."""
    for c in plan.captures:
        print(
            f"cellbench: cells: run {c['run']}: {c['cells']} cells, {c['pdus']} PDUs leaving "
            f"{c['place']} ({c['link']}, {c['phy']}) in {c['path']}",
            file=sys.stderr,
        )
    more = plan.captures_total - len(plan.captures)
    if more > 0:
        print(f"cellbench: cells: {more} more capture(s) in {plan.cells_dir}", file=sys.stderr)
    empty = plan.captures_empty
    if empty:
        runs = ", ".join(str(r) for r in sorted(empty)[:5]) + (", ..." if len(empty) > 5 else "")
        print(
            f"cellbench: note: cells: {len(empty)} capture(s) hold no cell (run {runs}): "
            f"nothing left {plan.tester(0)} in those runs; a port carries the cells to its "
            "host (data one way, ACKs the other), adapter:HOST the cells HOST sends",
            file=sys.stderr,
        )


def _load(path: Path):
    from cellbench.experiment import results

    try:
        return results.load(path)
    except results.ResultError as e:
        raise UsageError(str(e)) from None


def _print_summary(result, fmt: str) -> None:
    summary = result.summary()
    if fmt == "json":
        print_json(
            {
                "result": str(result.path) if result.path else None,
                "unit": "Mb/s (10^6 bit/s); mean_mbit_ttcp in ttcp's Mbit/s (2^20 bit/s)",
                "summary": json.loads(summary.to_json(orient="records")),
            }
        )
        return
    from cellbench.files import printable

    m = result.meta
    exp = m.get("experiment", {})
    # (What a result's files say, escaped: a hostile result.json must not drive the
    # terminal.)
    print(
        printable(
            f"# {exp.get('file', m.get('study', '?'))}: {m.get('runs_total')} run(s), "
            f"seed {m.get('seed')}, "
            f"testbed {m.get('testbed', {}).get('name', m.get('study', '?'))}, "
            f"cellbench {m.get('cellbench_version')}"
        )
        + ("" if m.get("complete", True) else "  [incomplete: --resume to finish]")
    )
    print("# throughput in Mb/s (10^6 bit/s); mbit_ttcp in ttcp's Mbit/s (2^20 bit/s)")
    if summary.empty:
        print("(no runs)")
        return
    table = summary.drop(columns=["limit_evidence"])
    text = table.to_string(index=False, float_format=lambda x: f"{x:.3f}")
    print("\n".join(printable(line) for line in text.splitlines()))
    _print_limits(result, summary)
    for line in contention.lines(result):
        print(line)
    for line in engine_table.get(m.get("engine", engine_table.DEFAULT)).summary_lines(result):
        print(line)


#: Up to this many summary rows, `show` prints each row's limit evidence.
MAX_EXPLAINED_ROWS = 20


def _print_limits(result, summary) -> None:
    """One line per summary row: what bound it, with the evidence."""
    rows = summary[summary["limit_evidence"].notna()]
    if rows.empty:
        return
    if len(rows) > MAX_EXPLAINED_ROWS:
        print(
            f"# limit evidence of every run: cellbench show {result.path or 'RESULT'} "
            "--format csv (columns limited_by, limit_evidence)"
        )
        return
    print("# limited by (most runs' limit; the evidence of the first such run):")
    for _, row in rows.iterrows():
        point = ", ".join(f"{p}={row[p]}" for p in result.params if p in row)
        where = f"{row['test']} ({row['transmitter']} -> {row['receiver']})"
        where += f" [{point}]" if point else ""
        print(f"#   {where}: {row['limited_by']}: {row['limit_evidence']}")


def show_main(args: argparse.Namespace) -> int:
    result = _load(args.result)
    if args.format == "csv":
        result.to_pandas().to_csv(sys.stdout, index=False, lineterminator="\n")
    elif args.format == "json":
        meta = dict(result.meta)
        rows = json.loads(result.to_pandas().to_json(orient="records"))
        for row in rows:
            # The emulator's lateness as its JSON contract names it, beside the columns.
            if row.get("lateness_p50_us") is not None:
                row["lateness_us"] = {q: row[f"lateness_{q}_us"] for q in ("p50", "p99", "max")}
        print_json({"meta": meta, "rows": rows})
    else:
        _print_summary(result, "table")
    return 0


def _capture(path: Path, run: int | None):
    """The capture ``plot --kind iat`` draws: a pcap file, or a result's ``cells/runN.pcap``;
    and, for a result's, the spacing driver of the run (a bare capture does not record it)."""
    from cellbench import cells

    if path.is_dir():
        folder = path / "cells"
        have = sorted(
            (int(f.stem[3:]) for f in folder.glob("run*.pcap") if f.stem[3:].isdigit()),
        ) if folder.is_dir() else []  # fmt: skip
        if not have:
            raise UsageError(
                f"{path}: no captures (cells/runN.pcap): run it with --cells PLACE or a "
                "tester { } block"
            )
        if run is None:
            run = have[0]
        elif run not in have:
            raise UsageError(f"--run {run}: {path} has captures of runs {have}")
        return cells.read(folder / f"run{run}.pcap"), _spacing_driver(_load(path), run)
    if run is not None:
        raise UsageError(f"--run {run}: {path} is one capture (--run picks one of a result's)")
    return cells.read(path), None


def _spacing_driver(result, run: int) -> str | None:
    """How the run's adapters spaced their cells, as the iat figure names it: the
    ``spacing`` swept (europe-vp's tester) or the testbed's spaced hosts' one mode,
    with the SBA-200 driver that mode is (docs/mechanisms.md); None if unspaced."""
    from cellbench.reproduce.tester import DRIVERS

    rows = result.to_pandas()
    mine = rows[rows["run"] == run]
    if "spacing" in mine and mine["spacing"].notna().any():
        modes = {str(mine["spacing"].dropna().iloc[0])}
    else:
        hosts = (result.meta.get("testbed") or {}).get("hosts") or []
        modes = {h.get("spacing") or "cell-level" for h in hosts if h.get("spacing_us")}
    if len(modes) != 1:
        return None
    [mode] = modes
    return f"{mode} spacing (driver {DRIVERS[mode]})" if mode in DRIVERS else f"{mode} spacing"


def plot_main(args: argparse.Namespace) -> int:
    from cellbench.plots import draw

    suffix = args.output.suffix.lower()
    if suffix not in (".png", ".svg", ".pdf"):
        raise UsageError(f"-o {args.output}: expected a .png, .svg or .pdf file name")
    from cellbench.plots import kinds

    if args.kind in kinds.of("capture"):
        options = (
            ("--where", args.where),
            ("--by", args.by),
            ("--compare", args.compare),
            ("--port", args.port),
            ("--connection", args.connection),
        )
        given = [f for f, v in options if v not in (None, [])]
        if given:
            raise UsageError(f"{', '.join(given)}: not for --kind {args.kind} (one capture)")
        capture, driver = _capture(args.result, args.run)
        from cellbench.plots.capture import iat

        iat(capture, args.output, driver=driver)
        print(f"cellbench: wrote {args.output}", file=sys.stderr)
        return 0
    result = _load(args.result)
    draw.plot(
        result,
        args.kind,
        args.output,
        run=args.run,
        connection=args.connection,
        port=args.port,
        where=args.where,
        by=args.by,
        compare=args.compare,
    )
    print(f"cellbench: wrote {args.output}", file=sys.stderr)
    return 0
