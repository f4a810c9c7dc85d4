"""The engine seam: one table of engines, one walker of the block tree, no engine
named outside ``cellbench/engines`` (issue 23)."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

from cellbench.engines import table as engine_table
from cellbench.engines.walk import walk
from cellbench.experiment.model import Group
from cellbench.experiment.plan import make_plan

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "cellbench"


def test_every_engine_in_the_table_fits_the_seam():
    from cellbench.cli import build_parser

    run = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    engine = next(a for a in run._actions if a.dest == "engine")
    assert list(engine.choices) == list(engine_table.NAMES) == ["sim", "real", "emu"]
    for name in engine_table.NAMES:
        kind = engine_table.get(name)
        assert kind.name == name
        assert kind.simulated is (name == "sim")
        assert kind.label.startswith("cellbench run") and kind.time_limit
        # (The simulator's work is its executor, a plain function a Dask worker can load.)
        for method in ("check", "check_line", "meta", "open", "begin", "payload", "work"):
            assert hasattr(kind, method), (name, method)
        for method in ("tables", "interrupt", "stop_runs", "allow_runs", "close"):
            assert callable(getattr(kind, method, None)), (name, method)
        assert callable(kind.summary_lines) and callable(kind.from_options)
        assert isinstance(kind.options, tuple) and isinstance(kind.columns, tuple)
        assert isinstance(kind.tool_options, tuple) and (kind.tools or not kind.tool_options)
        assert kind.about
        assert not kind.tools or callable(getattr(kind, "connection_report", None)), name
        assert isinstance(kind.traffic_not_yet, dict), name
    with pytest.raises(ValueError, match="engine 'ns3': expected one of sim, real, emu"):
        engine_table.get("ns3")


def test_no_engine_is_named_outside_the_engines_package():
    """The command line asks the table (engine_table.get, engine_table.simulated), never which
    engine it has."""
    found = []
    for f in PACKAGE.rglob("*.py"):
        if "engines" in f.relative_to(PACKAGE).parts[:1]:
            continue
        for i, line in enumerate(f.read_text().splitlines(), 1):
            if re.search(r"engine\s*[!=]=", line):
                found.append(f"{f.relative_to(ROOT)}:{i}: {line.strip()}")
    assert found == []


def test_the_engines_and_their_modules_do_not_import_the_command_line():
    files = list((PACKAGE / "engines").rglob("*.py"))
    assert {"loop.py", "netns.py", "controller.py"} <= {f.name for f in files}
    for f in files:
        assert "cellbench.cli" not in f.read_text(), f


#: An import of an engine's package: ``cellbench.engines.sim`` (and ``.api``), ``.emu...``.
ENGINE_IMPORT = re.compile(r"cellbench\.engines(\.| import )(sim|emu|real)\b")


def test_the_seam_and_the_loop_import_no_engine():
    """Each engine's package imports the seam, never the other way round; only the table
    lists them."""
    for name in ("base.py", "rows.py", "walk.py", "loop.py", "cluster.py", "localcluster.py"):
        text = (PACKAGE / "engines" / name).read_text()
        assert not ENGINE_IMPORT.search(text), name


def test_the_store_is_below_every_engine_and_holds_the_groups_the_engines_name():
    """experiment/ (the plan, the store) imports no engine; the store's engine column
    groups are exactly those the engines name as theirs, and each engine's columns are
    in every stored runs table, in the store's order."""
    from cellbench.experiment.results.columns import ENGINE_COLUMNS, ROW_COLUMNS

    upward = re.compile(r"^\s*(from|import) cellbench\.engines\b", re.M)
    for f in (PACKAGE / "experiment").rglob("*.py"):
        assert not upward.search(f.read_text()), f
    named = {g.name for kind in engine_table.ENGINES.values() for g in kind.columns}
    assert (
        named == set(ENGINE_COLUMNS) == {"real-clock", "real", "emu", "real-receiver", "emu-kernel"}
    )
    stored = [name for name, _ in ROW_COLUMNS]
    for kind in engine_table.ENGINES.values():
        for group in kind.columns:
            assert ENGINE_COLUMNS[group.name] is group
            names = [name for name, _ in group.columns]
            at = stored.index(names[0])
            assert stored[at : at + len(names)] == names, (kind.name, group.name)
            # A group that names none follows every column there was (its place: the end).
            if group.after is not None:
                assert stored[at - 1] == group.after, group.name


def test_run_refuses_an_option_its_engine_does_not_take_from_the_table():
    """Each engine's own options (``Engine.options``): another engine refuses them with
    the owner's words; the simulator takes --host and ignores it."""
    from cellbench.cli import build_parser
    from cellbench.cli.common import UsageError
    from cellbench.cli.run import _engine

    said = {}
    for kind in engine_table.ENGINES.values():
        for o in kind.options:
            option, why = o.dest, o.refusal
            if why is None:
                continue
            for other in engine_table.NAMES:
                refusal = engine_table.refused(other, lambda d, option=option: d == option)
                if option in {t.dest for t in engine_table.get(other).options}:
                    assert refusal is None, (option, other)
                else:
                    assert refusal == why.format(engine=other), (option, other)
                    said[(option, other)] = refusal
    assert said[("pcap", "sim")].startswith("--pcap needs --engine emu")
    assert said[("trace", "real")] == "--trace is not available with --engine real yet"
    assert ("hosts", "sim") not in said and ("hosts", "emu") in said
    args = build_parser().parse_args(["run", "x.netspec", "--engine", "real", "--dask", "a"])
    with pytest.raises(UsageError, match="--dask is not available with --engine real yet"):
        _engine(args)
    assert engine_table.STUDY_NAMES == ("sim", "emu") and engine_table.DEFAULT == "sim"


class _Recorder:
    """A walker's engine that records when each connection started and ended."""

    def __init__(self, seconds: dict[int, float]):
        self.seconds = seconds
        self.log: list[tuple[str, int, float]] = []
        self.jobs: list[list[int]] = []
        self.lock = threading.Lock()

    def launch(self, conns, start_at):
        with self.lock:
            self.jobs.append(list(conns))
        return [(i, start_at) for i in conns]

    def finish(self, job):
        for i, start_at in job:
            time.sleep(max(0.0, start_at - time.time()))
            with self.lock:
                self.log.append(("start", i, time.time()))
        time.sleep(max(self.seconds[i] for i, _ in job))
        with self.lock:
            for i, _ in job:
                self.log.append(("end", i, time.time()))

    def margin(self, n):
        return 0.01

    def stop(self):
        pass


def test_the_walker_keeps_serial_and_parallel_on_the_real_clock():
    """serial-parallel.netspec's tree, as the model keeps it: a serial block of three
    parallel steps, the last holding a nested serial block beside a connection."""
    plan = make_plan(ROOT / "examples" / "serial-parallel.netspec")
    exp = plan.experiments[0]
    names = [c.name for c in exp.connections]
    assert names == ["a1", "b1", "a2", "a3", "b3"]
    tree = exp.tree
    assert tree == Group(
        "parallel",
        [Group("serial", [Group("parallel", [0, 1]), Group("parallel", [2]),
                          Group("parallel", [Group("serial", [Group("parallel", [3])]), 4])])],
    )  # fmt: skip
    rec = _Recorder({0: 0.05, 1: 0.05, 2: 0.1, 3: 0.05, 4: 0.05})
    walk(tree, time.time(), rec)
    at = {(what, i): t for what, i, t in rec.log}
    # A parallel step's own connections go as one job; a nested group beside them.
    assert sorted(map(sorted, rec.jobs)) == [[0, 1], [2], [3], [4]]
    # Each serial step starts once every connection of the one before has ended.
    assert at[("start", 2)] >= max(at[("end", 0)], at[("end", 1)])
    assert min(at[("start", 3)], at[("start", 4)]) >= at[("end", 2)]
    # The last step's children start together.
    assert abs(at[("start", 3)] - at[("start", 4)]) < 0.05


def test_the_real_engine_takes_the_models_tree_and_the_files_buffers():
    from cellbench.engines.real import plan as rplan

    plan = make_plan(ROOT / "examples" / "real-lan.netspec")
    exp = plan.experiments[0]
    real = rplan.build(exp, {})
    assert real.root is exp.tree
    for rc, c in zip(real.connections, exp.connections):
        assert rc.conn is c and rc.port == c.port
        assert (rc.sndbuf, rc.rcvbuf) == (c.sndbuf_asked, c.rcvbuf_asked)
    # --host overrides an address; a host the experiment lacks is named.
    first = exp.hosts[0].name
    assert rplan.build(exp, {first: "192.0.2.7"}).addresses[first] == "192.0.2.7"
    with pytest.raises(ValueError, match="nohost is not a host of this experiment"):
        rplan.build(exp, {"nohost": "192.0.2.8"})


def test_ttcp_and_netperf_run_a_one_task_plan_through_the_loop(monkeypatch, capsys):
    """The tools drive no engine by hand: one run through the loop
    (``loop.run_task``) on --engine, whose choices are the table's."""
    from cellbench.cli import build_parser, main
    from cellbench.engines import loop

    tools = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for tool in ("ttcp", "netperf"):
        engine = next(a for a in tools[tool]._actions if a.dest == "engine")
        assert list(engine.choices) == list(engine_table.TOOL_NAMES) == ["sim", "real"]
    seen = []
    run_task = loop.run_task

    def counted(plan, engine):
        seen.append((plan.runs_total, engine.name))
        return run_task(plan, engine)

    monkeypatch.setattr(loop, "run_task", counted)
    assert main(["ttcp", "-t", "-n", "16"]) == 0
    assert main(["netperf", "-t", "TCP_RR", "-l", "0.2"]) == 0
    assert seen == [(1, "sim"), (1, "sim")]
    out = capsys.readouterr().out
    assert f"ttcp-t: {16 * 8192} bytes in " in out and "TCP REQUEST/RESPONSE TEST to B" in out
