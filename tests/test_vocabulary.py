"""The simulator's vocabulary (``_native.vocabulary()``, sim/vocabulary.rs) is what the
Python side builds from: every field of a simulator result is stored, the store's
existing columns keep their names, order and types, and a result stored before the
vocabulary still reads and resumes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cellbench import _native, vocab
from cellbench.cli import main
from cellbench.engines.sim.api import run as run_experiment
from cellbench.experiment import model, results
from cellbench.experiment.testbed.geometry import FIBRE_US_PER_KM
from cellbench.experiment.testbed.schema import PHYS, POLICIES

ROOT = Path(__file__).resolve().parent.parent

#: The runs table's columns before the vocabulary: the store kept these 99, in this
#: order; a result written then has exactly these.
OLD_RUN_COLUMNS = 99


@pytest.fixture
def raw(monkeypatch):
    """The simulator's results of every run, as it returned them."""
    seen: list[dict] = []
    real = _native.simulate

    def kept(spec):
        out = real(spec)
        seen.append(out)
        return out

    monkeypatch.setattr(_native, "simulate", kept)
    return seen


def _same(a, b) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    if isinstance(a, list):
        a = " -> ".join(a)
    return a == b or (isinstance(a, (int, float)) and float(a) == float(b))


def _check_stored(result: results.Result, out: dict, run: int) -> set[str]:
    """Every field of one run's simulator result against the stored result; the
    fields that held a value (so were compared), as record.name."""
    compared: set[str] = set()
    rows = result.to_pandas()
    tables = {
        "trace": result.traces(),
        "port": result.ports(),
        "policer": result.policers(),
    }
    for f in vocab.RESULT_FIELDS:
        record, name, kind = f["record"], f["name"], f["kind"]
        where = f"{record}.{name}"
        if kind in ("record", "records", "columns"):
            continue  # its items' fields are checked as their record
        runs_records = ("run", "connection", "lockstep_cycle", "cells")
        if record in runs_records or where == "policer.met_contract":
            if name in ("trace", "cwnd_series", "acr_series"):
                continue  # checked below, as tables of their own
            column = results.runs_column(f)
            assert column in rows.columns, f"{where} is not stored"
            mine = rows[rows["run"] == run].sort_values("connection")
            for i, conn in enumerate(out["connections"]):
                if record == "run":
                    value = out[name]
                elif record == "connection":
                    value = conn[name]
                elif record == "lockstep_cycle":
                    value = (conn["lockstep_cycle"] or {}).get(name)
                elif record == "cells":
                    value = (out.get("cells") or {}).get(name)
                else:
                    pol = out["policers"]
                    value = all(p["met_contract"] for p in pol) if pol else None
                stored = mine.iloc[i][column]
                assert _same(value, None if stored is None else stored), (where, value, stored)
                compared |= {where} if value is not None else set()
        elif record in tables:
            if kind == "series":
                continue
            table = tables[record]
            assert name in table.columns, f"{where} is not stored"
            items = {
                "trace": [
                    dict(zip(c["trace_records"], values))
                    for c in out["connections"]
                    for values in zip(*c["trace_records"].values())
                ],
                "port": out["ports"],
                "policer": out["policers"],
            }[record]
            mine = table[table["run"] == run]
            assert len(mine) == len(items), where
            for item, stored in zip(items, mine[name]):
                assert _same(item[name], stored), (where, item[name], stored)
                compared |= {where} if item[name] is not None else set()
        else:
            raise AssertionError(f"a result record the store does not know: {record}")
    # The series and the trace's lines, table by table.
    cwnd = result.cwnd_series()
    samples = [s for c in out["connections"] for s in c.get("cwnd_series") or []]
    assert len(cwnd[cwnd["run"] == run]) == len(samples)
    queue = result.queue_series()
    samples = [s for p in out["ports"] for s in p.get("queue_series") or []]
    assert len(queue[queue["run"] == run]) == len(samples)
    acr = result.acr_series()
    samples = [s for c in out["connections"] for s in c.get("acr_series") or []]
    assert len(acr[acr["run"] == run]) == len(samples)
    traces = result.traces()
    lines = [line for c in out["connections"] for line in c["trace"]]
    assert list(traces[traces["run"] == run]["line"]) == lines
    compared |= {"connection.trace", "connection.cwnd_series", "port.queue_series"}
    compared |= {"connection.acr_series"} if samples else set()
    return compared


def test_every_simulator_result_field_is_stored(raw, tmp_path):
    """Three runs that between them give every field a value: europe-vp's policed VP
    (a UPC, a cell tester), lan-buffers' 16K x 24K lock-step (a timer-paced cycle) and
    examples/abr.netspec cut short (ABR circuits and an ERICA switch)."""
    compared: set[str] = set()
    europe = (ROOT / "python/cellbench/reproduce/europe-vp.netspec").read_text()
    europe = europe.replace("window = [16K, 32K, 48K]", "window = 32K")
    europe = europe.replace("spacing_us = [off, 19.45, 17.98, 16.50, 16.01]", "spacing_us = off")
    europe = europe.replace("write_size = [4K, 8K, 16K, 32K, 64K]", "write_size = 8K")
    europe = europe.replace("nbytes = 16M", "nbytes = 512K")
    lan = (ROOT / "examples/lan-buffers.netspec").read_text()
    abr = (ROOT / "examples/abr.netspec").read_text().replace("duration=1", "duration=0.02")
    for name, text, sets, cells in (
        ("europe", europe, {}, "sparc10-b"),
        ("lan", lan, {"snd": 16384, "rcv": 24576, "nbytes": 1 << 20, "replications": 1}, None),
        ("abr", abr, {}, None),
    ):
        raw.clear()
        out = tmp_path / name
        result = run_experiment(
            text, out=out, trace=True, series=True, workers=1, cells=cells, **sets
        )
        assert len(raw) == 1
        compared |= _check_stored(results.load(out), raw[0], 0)
        compared |= _check_stored(result, raw[0], 0)
    nulls_here = {"datagrams_sent", "datagrams_received", "datagrams_dropped_no_buffer"}
    nulls_here |= {"transactions", "transaction_rate", "ack"}
    everything = {
        f"{f['record']}.{f['name']}"
        for f in vocab.RESULT_FIELDS
        if f["kind"] not in ("record", "records", "columns") and f["name"] not in nulls_here
    }
    assert everything <= compared, sorted(everything - compared)


def test_the_store_keeps_its_columns_and_appends():
    """The runs table begins with the 99 columns it always had (same names, order and
    types: a result written before reads as it did), then the simulator's new fields."""
    names = [n for n, _ in results.ROW_COLUMNS]
    assert len(names) == len(set(names))
    old = results.ROW_COLUMNS[:OLD_RUN_COLUMNS]
    assert old[0] == ("run", "int64") and old[-1] == ("emu_preemptions", "int64")
    assert old[names.index("met_contract") + 1] == ("engine", "string")
    assert old[names.index("transaction_rate") + 1] == ("congestion", "string")
    added = names[OLD_RUN_COLUMNS:]
    for field in ("bytes_received", "reads", "writes", "min_rtt_s", "peak_flight_bytes"):
        assert field in added
    assert ("cycle_repeats", "int64") in results.ROW_COLUMNS


def test_a_result_stored_before_the_vocabulary_reads_and_resumes(tmp_path, monkeypatch, capsys):
    """Parts written with the old columns (99 runs columns, trace lines without their
    records, no policers table) read with the new columns empty, and resume extends them."""
    exp = tmp_path / "lan.netspec"
    exp.write_text((ROOT / "examples/lan-buffers.netspec").read_text())
    out = tmp_path / "old"
    args = ["run", str(exp), "--out", str(out), "--trace", "--workers", "1", "--replications", "1"]
    args += ["--set", "snd=16K,32K", "--set", "rcv=24K", "--set", "nbytes=256K"]
    with monkeypatch.context() as m:
        # (Where the store reads them: its tables, the reader filling what is new, the cut.)
        for module in (results.tables, results.read):
            m.setattr(module, "ROW_COLUMNS", results.ROW_COLUMNS[:OLD_RUN_COLUMNS])
        m.setitem(results.PARTS, "traces", results.TRACE_COLUMNS[:6])
        m.setattr(results.store, "PART_RUNS", 1)
        real, calls = _native.simulate, []

        def once(spec):
            if calls:
                raise KeyboardInterrupt
            calls.append(spec)
            return real(spec)

        m.setattr(_native, "simulate", once)
        assert main(args) == 130
    # What a store of then holds: no folder for a table it did not know.
    (out / "policers").rmdir()
    old = results.load(out)
    rows = old.to_pandas()
    assert len(rows) == 1 and rows["reads"].isna().all()
    assert old.traces()["line"].notna().all() and old.traces()["seq"].isna().all()
    assert old.policers().empty
    # Its trace is lines only: the time-sequence graph says so, in one line.
    svg = tmp_path / "t.svg"
    assert main(["plot", str(out), "--kind", "time-sequence", "-o", str(svg)]) != 0
    assert "stored as lines only" in capsys.readouterr().err
    # Resumed: the missing run is run and stored with every column.
    assert main([*args[:-8], "--resume", *args[-8:]]) == 0
    rows = results.load(out).to_pandas().sort_values("run")
    assert rows["reads"].isna().tolist() == [True, False]
    assert rows["throughput_bps"].notna().all()


def test_python_reads_its_words_from_the_simulator():
    assert PHYS == ("oc3c", "oc12c", "taxi100", "taxi140", "e3", "ds3")
    assert POLICIES == ("tail-drop", "ppd", "epd")
    assert model.DEFAULT_SOCKBUF == 52428 and model.DEFAULT_BLOCKSIZE == 8192
    assert model.TIME_LIMIT_S == 3600.0 and model.MAX_PERIOD_US == 1e12
    assert model.MAX_BLOCK == 1 << 20 and model.MAX_DATAGRAM == 65507
    assert FIBRE_US_PER_KM == 5.0 and vocab.FIBRE_S_PER_M == 5e-9
    # Every category a connection can have, the simulator's cut runs' included.
    assert {"lockstep", "host-cpu", "time-limit", "event-budget"} <= set(vocab.LIMIT_CATEGORIES)
