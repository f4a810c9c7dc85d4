"""`cellbench reproduce NAME`: run a classic study and compare with the published result.

Every study's command is made from its registry entry (``cellbench.reproduce.REGISTRY``,
``reproduce.study.Study``): the runner's options (--out, --resume, --overwrite, --dask,
--series, --replications, --set), --part over its parts, its own options, and --engine
where the study has an emulated form.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cellbench import reproduce as registry
from cellbench import scratch
from cellbench.cli.common import (
    UsageError,
    check_workers,
    interrupted,
    positive_float,
    positive_int,
    print_json,
    seed,
)
from cellbench.engines import table as engine_table
from cellbench.engines.cluster import DASK_TIMEOUT_S
from cellbench.engines.loop import LOOKAHEAD_HELP
from cellbench.reproduce import emu
from cellbench.reproduce import study as studies
from cellbench.reproduce.study import Study


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reproduce",
        help="run a classic TCP-over-ATM study and compare with the published result",
        description="Run a classic testbed on the simulator (docs/ in the repository has "
        "a page per study: its setup, mechanisms and published source).",
    )
    parsers = p.add_subparsers(dest="name", metavar="STUDY")
    parsers.required = True
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
    for s in registry.REGISTRY.values():
        w = parsers.add_parser(
            s.name, parents=[common], help=s.help, description=s.description or s.help
        )
        _part_option(w, s)
        _runner_options(w, s)
        if s.options is not None:
            s.options(w)
        if s.emulated is not None:
            _engine_options(w, s)
        w.set_defaults(func=_with_report(main))


def _part_option(p: argparse.ArgumentParser, s: Study) -> None:
    default = s.default_parts or [x.name for x in s.parts]
    p.add_argument(
        "--part",
        action="append",
        choices=[x.name for x in s.parts],
        help="run only this part (repeatable; default "
        + ("all" if len(default) == len(s.parts) else ", ".join(default))
        + "): "
        + "; ".join(f"{x.name}: {x.doc}" for x in s.parts),
    )


def _runner_options(p: argparse.ArgumentParser, s: Study) -> None:
    """The runner's options, one meaning in every study (reproduce.study)."""
    p.epilog = LOOKAHEAD_HELP
    p.add_argument(
        "--replications",
        type=positive_int("--replications"),
        default=None,
        help=s.replications_help,
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="store the result there (cellbench show/plot read it); a study whose parts "
        "run several experiments stores each in DIR/RUN (e.g. DIR/five-pairs)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="finish an interrupted --out result, or repair a damaged one (re-runs exactly "
        "the runs missing or damaged; a complete one runs nothing)",
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
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        metavar="KEY=VALUE",
        help="a value or list of the study's experiment file(s), as cellbench run --set "
        "(e.g. seconds=2); on every experiment the parts run (with --engine emu: the "
        "emulated file's); repeatable",
    )


def _engine_options(p: argparse.ArgumentParser, s: Study) -> None:
    """--engine, and the options of a study on the emulator (reproduce.emu)."""
    p.add_argument(
        "--engine",
        choices=engine_table.STUDY_NAMES,
        default=engine_table.DEFAULT,
        help="sim: the simulator (default); emu: this machine's Linux TCP in network "
        "namespaces over the emulated cells in real time (Linux, root), beside the "
        "simulator's result for the same cases"
        + (f" (its {s.emulated.sim_part} part)" if s.emulated and len(s.parts) > 1 else ""),
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
        "--full-grid",
        action="store_true",
        help="the study's whole grid (default: a part of it, said on stderr)",
    )
    g.add_argument("--no-sim", action="store_true", help="without the simulator's column")


def _with_report(func):
    """A study's command with --report: the study stores its result (in a temporary
    directory without --out), then every result it stored goes on one page."""

    def run(args: argparse.Namespace) -> int:
        if args.report is None:
            return func(args)
        from cellbench.cli.report import check_output, write_report
        from cellbench.experiment import results

        check_output(args.report, "--report")
        if getattr(args, "trace", False):
            raise UsageError("--trace prints the transfers; it does not combine with --report")
        with scratch.directory("cellbench-reproduce-") as tmp:
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
                    # A temporary directory, gone when the page is written: the page
                    # names the result by its place in it (the study's part).
                    r.label = r.path.relative_to(tmp).as_posix()
                    r.path = None
            write_report(found, args.report, f"cellbench reproduce {args.name}")
        return 0

    return run


def stored_results(root: Path) -> list[Path]:
    """The result directories at or under ``root`` (a study with parts or pairs stores
    one per run, ``root/RUN``), in name order."""
    if (root / "result.json").is_file():
        return [root]
    found = []
    for sub in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        found += stored_results(sub)
    return found


def _check_args(args: argparse.Namespace) -> None:
    check_workers(args.workers)
    for flag, on in (("--resume", args.resume), ("--overwrite", args.overwrite)):
        if on and args.out is None:
            raise UsageError(f"{flag} needs --out DIR (the result to {flag[2:]})")
    if args.series and args.out is None:
        raise UsageError("--series needs --out DIR (the series are stored with the result)")


def main(args: argparse.Namespace) -> int:
    _check_args(args)
    study = registry.REGISTRY[args.name]
    # The simulator runs the study; a real-time engine runs it beside the simulator's.
    simulated = engine_table.simulated(getattr(args, "engine", engine_table.DEFAULT))
    return (run_sim if simulated else run_emu)(study, args)


def run_sim(study: Study, args: argparse.Namespace) -> int:
    """The study on the simulator: its parts through the runner, then its table or JSON."""
    if study.emulated is not None:
        # The emulator's options: the simulator would ignore them.
        given = [
            flag
            for flag, on in (
                ("--kernel-cc", args.kernel_cc),
                ("--seconds", args.seconds),
                ("--full-grid", args.full_grid),
                ("--no-sim", args.no_sim),
            )
            if on
        ]
        if given:
            raise UsageError(f"{', '.join(given)}: for --engine emu (the simulator runs the study)")
    opts = studies.Options(
        seed=args.seed,
        workers=args.workers,
        out=args.out,
        resume=args.resume,
        overwrite=args.overwrite,
        dask=args.dask,
        progress=True,
        series=args.series,
        replications=args.replications,
        sets=tuple(args.sets or ()),
        parts=tuple(args.part or ()),
        params=study.params(args) if study.params is not None else {},
    )
    try:
        got = studies.run_parts(study, opts)
    except KeyboardInterrupt as e:
        if args.out is None:
            raise
        return interrupted(args, _latest(args.out), e)
    if args.json:
        print_json(studies.to_json(study, opts, got))
    else:
        print(studies.report(study, opts, got))
    return 0


def _latest(out: Path) -> Path:
    """The result an interruption stopped: the one under ``out`` written last."""
    found = stored_results(out) if out.exists() else []
    return max(found, key=lambda p: p.stat().st_mtime, default=out)


def run_emu(study: Study, args: argparse.Namespace) -> int:
    """``reproduce NAME --engine emu``: the emulated study beside the simulator's
    (the study's ``emulated.options``: the simulator's study options, and the study's
    own options as values of the emulated file)."""
    name = args.name
    if study.emulated is None:
        raise UsageError(
            f"reproduce {name} is not available with --engine emu yet "
            f"(it is for: {', '.join(emu.studies())})"
        )
    for flag in ("--dask", "--series", "--trace"):
        if getattr(args, flag[2:], None):
            raise UsageError(f"{flag} is not available with --engine emu yet")
    # The emulator runs one part of a study (the simulator's column is that part).
    part = study.emulated.sim_part
    other = [x for x in args.part or () if x != part]
    if other:
        raise UsageError(f"--part {other[0]}: with --engine emu, {name} runs its {part} part only")
    sim, sets = study.emulated.options(args)
    out = args.out
    try:
        df = emu.run(
            name,
            sets=sets + (args.sets or []),
            full_grid=args.full_grid,
            seconds=args.seconds,
            kernel_cc=args.kernel_cc,
            replications=args.replications,
            seed=args.seed,
            out=out,
            resume=args.resume,
            overwrite=args.overwrite,
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


__all__ = ["register", "stored_results"]
