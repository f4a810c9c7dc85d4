"""Running experiments: same numbers as `reproduce lan-buffers`, determinism across
workers, resume after an interruption, the result format, the CLI end to end, Dask."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import cellbench
from cellbench.cli import main
from cellbench.engines.loop import execute_plan
from cellbench.engines.sim import SimEngine, execute
from cellbench.experiment import results
from cellbench.experiment.plan import make_plan

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
LAN = EXAMPLES / "lan-buffers.netspec"
SMALL = ["snd=16K,32K", "rcv=16K,32K", "nbytes=2M"]


def files(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


def test_lan_buffers_file_gives_the_reproduction_numbers():
    res = cellbench.run(LAN, set=SMALL, replications=2, workers=2)
    df = res.to_pandas()
    ref = cellbench.reproduce(
        "lan-buffers",
        send_buffer=[16384, 32768],
        recv_buffer=[16384, 32768],
        replications=2,
        nbytes=2 * 1024 * 1024,
        workers=1,
    )
    assert len(df) == len(ref) == 8
    got = df[["snd", "rcv", "replication", "throughput_mbit_ttcp", "lockstep", "bytes"]]
    want = ref[
        ["send_buffer", "recv_buffer", "replication", "throughput_mbit_ttcp", "lockstep", "bytes"]
    ]
    assert got.to_numpy().tolist() == want.to_numpy().tolist()
    # The configuration really reached the simulator (16K send x 32K receive locks up).
    assert (df.sndbuf == df.snd).all() and (df.rcvbuf == df.rcv).all()
    locked = df[(df.snd == 16384) & (df.rcv == 32768)]
    assert locked.lockstep.all() and (locked.throughput_mbit_ttcp < 2).all()


def test_python_api_overrides_and_text():
    text = (EXAMPLES / "netspec-example.netspec").read_text()
    res = cellbench.run(text, **{"roadrunner.type.duration": 0.5})
    row = res.to_pandas().iloc[0]
    assert row.duration_s == 0.5 and row.completed and row.throughput_bps > 1e6
    assert res.meta["notes"][0].endswith("accepts: using 52428")
    s = res.summary()
    assert list(s["test"]) == ["roadrunner"] and s["runs"].iloc[0] == 1


def test_two_workers_equal_one_byte_for_byte(tmp_path, monkeypatch):
    # Parts of 3 runs: where a part is cut depends on the runs, not on who finished first.
    monkeypatch.setattr(results.store, "PART_RUNS", 3)
    a, b = tmp_path / "a", tmp_path / "b"
    for out, workers in ((a, 1), (b, 2)):
        cellbench.run(LAN, set=SMALL, replications=2, out=out, workers=workers, trace=True)
    fa, fb = files(a), files(b)
    assert [f for f in fa if f.startswith("runs/")] == [
        "runs/part-000000-000002.parquet",
        "runs/part-000003-000005.parquet",
        "runs/part-000006-000007.parquet",
    ]
    assert fa == fb
    assert main(["show", str(a), "--format", "csv"]) == 0


def test_resume_after_interruption(tmp_path, capsys):
    out = tmp_path / "r"
    calls = []

    def dying(spec):
        if len(calls) == 3:
            raise KeyboardInterrupt  # a Ctrl-C (or a killed worker) after three runs
        calls.append(1)
        return execute(spec)

    plan = make_plan(LAN, sets=SMALL, replications=2)
    store = results.ResultDir(out, plan.meta(), resume=False)
    with pytest.raises(KeyboardInterrupt):
        execute_plan(plan, store, SimEngine(dying), workers=1)
    # The three finished runs are in a part at once, readable as plain Parquet.
    assert [p.name for p in (out / "runs").iterdir()] == ["part-000000-000002.parquet"]
    assert len(pd.read_parquet(out / "runs")) == 3
    part = results.load(out)
    assert part.meta["complete"] is False and len(part.to_pandas()) == 3
    # Without --resume the directory is not touched; with it, the rest runs.
    assert (
        main(
            [
                "run",
                str(LAN),
                "--out",
                str(out),
                "--replications",
                "2",
                *sum((["--set", s] for s in SMALL), []),
            ]
        )
        == 2
    )
    assert "exists: --resume to finish it, --overwrite to replace it" in capsys.readouterr().err
    args = ["run", str(LAN), "--out", str(out), "--replications", "2", "--resume"]
    args += sum((["--set", s] for s in SMALL), [])
    assert main(args) == 0
    fresh = tmp_path / "fresh"
    cellbench.run(LAN, set=SMALL, replications=2, out=fresh)
    # The same rows as an uninterrupted run, in the same part: the one cut short by
    # the interruption was taken apart again.
    pd.testing.assert_frame_equal(results.load(out).to_pandas(), results.load(fresh).to_pandas())
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["part-000000-000007.parquet"]
    assert files(out / "runs") == files(fresh / "runs")
    assert results.load(out).meta["complete"] is True
    # A resume with other settings is refused.
    with pytest.raises(results.ResultError, match="different experiment"):
        cellbench.run(LAN, set=SMALL, replications=3, out=out, resume=True)


def test_format_versions(tmp_path):
    out = tmp_path / "r"
    cellbench.run(LAN, set=["snd=16K", "rcv=16K", "nbytes=1M"], replications=1, out=out)
    meta = json.loads((out / "result.json").read_text())
    assert meta["format"] == "cellbench-result" and meta["format_version"] == 3
    assert meta["experiment"]["text"] == LAN.read_text() == (out / "experiment.netspec").read_text()
    assert meta["testbed"]["hosts"][0]["profile"] == "sparc-ipc"
    assert meta["cellbench_version"] == cellbench.__version__ and meta["seed"] == 1
    # Plain Parquet: pandas reads the parts as one table.
    assert len(pd.read_parquet(out / "runs")) == 1
    meta["format_version"] = 4
    (out / "result.json").write_text(json.dumps(meta))
    with pytest.raises(results.ResultError) as e:
        results.load(out)
    assert "format_version 4 is newer than this cellbench reads (1..3): upgrade cellbench" in str(
        e.value
    )
    assert main(["show", str(out)]) == 2
    # Version 1 (what `cellbench reproduce --out` wrote before it became an
    # experiment run): result.json + runs.csv, still read.
    old = tmp_path / "old"
    old.mkdir()
    v1 = {"format": "cellbench-result", "format_version": 1, "cellbench_version": "0.1.0",
          "study": "lan-buffers", "seed": 1, "replications": 2}  # fmt: skip
    (old / "result.json").write_text(json.dumps(v1))
    pd.DataFrame(
        {
            "send_buffer": [16384, 16384],
            "recv_buffer": [20480, 20480],
            "seed": [1, 1],
            "replication": [0, 1],
            "throughput_mbit_ttcp": [12.0, 12.1],
        }  # fmt: skip
    ).to_csv(old / "runs.csv", index=False)
    r1 = results.load(old)
    assert r1.meta["format_version"] == 1 and len(r1.to_pandas()) == 2
    assert set(r1.to_pandas().rcvbuf) == {20480}


def test_cli_run_show_plot_end_to_end(tmp_path, capsys):
    out = tmp_path / "res"
    rc = main(
        [
            "run",
            str(EXAMPLES / "netspec-example.netspec"),
            "--out",
            str(out),
            "--set",
            "roadrunner.type.duration=0.5",
            "--set",
            "hopper.type.duration=0.5",
            "--seed",
            "3",
            "--json",
        ]
    )
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "note: " in cap.err and "using 52428" in cap.err
    summary = json.loads(cap.out)["summary"]
    assert len(summary) == 1 and summary[0]["transmitter"] == "roadrunner.atm"
    assert summary[0]["mean_mbps"] > 1
    assert main(["show", str(out)]) == 0
    table = capsys.readouterr().out
    assert "roadrunner.atm" in table and "seed 3" in table and "Mb/s (10^6 bit/s)" in table
    assert main(["show", str(out), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["meta"]["seed"] == 3 and shown["rows"][0]["seed"] == 3
    # One point: no window was swept, and the plot says so rather than draw one dot.
    assert main(["plot", str(out), "--kind", "window", "-o", str(tmp_path / "w.png")]) == 2
    assert "window needs the window (min of SO_SNDBUF, SO_RCVBUF) swept" in capsys.readouterr().err
    assert not (tmp_path / "w.png").exists()
    # A malformed file: one line, exit 2, nothing written.
    bad = tmp_path / "bad.netspec"
    bad.write_text("cluster {\n  test a { type = full (blocksize=8K nbytes=1M); }\n}\n")
    assert main(["run", str(bad), "--out", str(tmp_path / "never")]) == 2
    err = capsys.readouterr().err
    assert err == f"cellbench: error: {bad}:2:38: found 'nbytes', expected ',' or ')'\n"
    assert not (tmp_path / "never").exists()
    assert main(["run", str(LAN), "--set", "snd=1:", "--check"]) == 2
    assert main(["run", str(LAN), "--set", "snd=16K", "--set", "rcv=16K", "--check"]) == 0
    assert "1 point(s) x 50 replication(s) = 50 run(s)" in capsys.readouterr().out
    assert main(["plot", str(out), "--kind", "time-sequence", "-o", str(tmp_path / "t.png")]) == 2
    assert "run it with --trace" in capsys.readouterr().err


def test_dask_local_cluster():
    distributed = pytest.importorskip("dask.distributed")
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        on_dask = cellbench.run(LAN, set=SMALL, replications=2, dask=client)
    local = cellbench.run(LAN, set=SMALL, replications=2, workers=1)
    pd.testing.assert_frame_equal(on_dask.to_pandas(), local.to_pandas())


def test_udp_connection_loses_datagrams_to_a_slow_receiver():
    text = """cluster {
    test a { type = full (blocksize=8K, nbytes=1M); protocol = udp (sndbuf=48K);
             own = a.atm:1; peer = b.atm:1; }
    test b { type = sink (blocksize=8K); protocol = udp (rcvbuf=48K);
             own = b.atm:1; peer = a.atm:1; }
    }"""
    row = cellbench.run(text).to_pandas().iloc[0]
    assert row.protocol == "udp" and row.datagrams_sent == 128
    # The SPARCstation IPC cannot keep up: datagrams are dropped at its receive buffer.
    assert 0 < row.datagrams_received < 128
    assert row.datagrams_received + row.datagrams_dropped_no_buffer == 128


def test_reproduce_out_refuses_an_existing_result_and_overwrites_on_request(tmp_path, capsys):
    """`reproduce --out DIR` run twice as written: the second names --overwrite, which
    replaces the result."""
    out = tmp_path / "o"
    study = ["reproduce", "lan-buffers", "--send-buffer", "16K", "--recv-buffer", "16K",
             "--replications", "1", "--nbytes", "1M", "--out", str(out)]  # fmt: skip
    assert main(study) == 0
    capsys.readouterr()
    assert main(study) == 2
    err = capsys.readouterr().err
    assert err == f"cellbench: error: {out} exists: --resume to finish it, --overwrite to " \
        "replace it, or --out another path\n"  # fmt: skip
    before = files(out)
    assert main([*study, "--overwrite"]) == 0
    assert files(out) == before


def test_request_response_traffic_counts_transactions():
    """examples/rr.netspec: netperf TCP_RR as traffic rr; larger responses lower the
    transaction rate, and a 9148-byte response locks into the delayed-ACK tick."""
    res = cellbench.run(EXAMPLES / "rr.netspec")
    df = res.to_pandas().set_index("response")
    assert (df.traffic == "rr").all() and (df.blocksize == 64).all()
    assert (df.transaction_rate == df.transactions / df.sender_seconds).all()
    rates = df.transaction_rate
    assert rates[1] > rates[1024] > rates[4096] > 100
    assert rates[9148] == pytest.approx(5.0, abs=0.5) and df.limited_by[9148] == "lockstep"
    s = res.summary().set_index("response")
    assert s.mean_trans_per_s.tolist() == rates.tolist()


RANDOM_RATE = """
cluster {
    test src {
        type = burstq (blocksize=uniform(1K, 7K), period=exponential(10000), duration=20);
        protocol = tcp (window=32K);
        own = a.atm:5000;
        peer = b.atm:5000;
    }
    test dst {
        type = sink (blocksize=8K);
        protocol = tcp (window=32K);
        own = b.atm:5000;
        peer = a.atm:5000;
    }
}
"""


def test_random_rate_traffic_runs_and_stores_the_means():
    """NetSpec random-rate traffic: block sizes uniform on [1K, 7K], inter-block
    times exponential with mean 10 ms, drawn per block from the run's own stream."""
    df = cellbench.run(RANDOM_RATE, replications=2).to_pandas()
    assert list(df.blocksize) == [4096, 4096] and list(df.period_us) == [10000.0, 10000.0]
    # Offered load is the mean block over the mean period: 4096 B / 10 ms.
    assert df.offered_bps.iloc[0] == pytest.approx(4096 * 8 / 0.01)
    # About 2000 blocks of 4 KB on average in 20 s, each replication its own draws.
    assert df.bytes.between(0.9 * 2000 * 4096, 1.1 * 2000 * 4096).all(), list(df.bytes)
    assert df.bytes.iloc[0] != df.bytes.iloc[1]


def test_serial_steps_run_on_one_timeline():
    """examples/serial-parallel.netspec is one simulation: each step starts at the
    instant the previous step's last connection ended, exactly."""
    res = cellbench.run(EXAMPLES / "serial-parallel.netspec")
    df = res.to_pandas().set_index("test")
    assert "stage" not in df.columns and "stages" not in res.meta
    assert df.completed.all() and (df.run == 0).all()
    assert (df.loc[["a1", "b1"], "start_s"] == 0).all()
    assert df.start_s["a2"] == max(df.end_s["a1"], df.end_s["b1"]) > 2.0
    assert df.start_s["a3"] == df.start_s["b3"] == df.end_s["a2"]
    # One network: one row per switch port, its counts over the whole run.
    ports = res.ports()
    assert "stage" not in ports.columns and ports.port.is_unique
    # a2 runs after b1 has ended: b1 does not share a port with it (issue 14).
    assert "share" not in df.limit_evidence["a2"]
    # Deterministic whatever the number of workers.
    runs = [
        cellbench.run(EXAMPLES / "serial-parallel.netspec", replications=2, workers=w).to_pandas()
        for w in (1, 2)
    ]
    pd.testing.assert_frame_equal(*runs)
    assert runs[0].start_s.iloc[2] != runs[0].start_s.iloc[7]  # each replication its own draws


BESIDE = """
testbed lan {
    defaults { profile = ultra-1; phy = oc3c; flavour = reno; }
    switch { buffer_cells = 4096; }
}
cluster {
    parallel {
        test long { type = full (blocksize=8K, duration=6); protocol = tcp (window=48K);
                    own = a.atm:1; peer = c.atm:1; }
        test long_rx { type = sink (blocksize=8K); protocol = tcp (window=48K);
                       own = c.atm:1; peer = a.atm:1; }
        serial {
            parallel {
                test x { type = full (blocksize=8K, nbytes=8M); protocol = tcp (nodelay=1);
                         own = b.atm:2; peer = c.atm:2; }
                test x_rx { type = sink (blocksize=8K); own = c.atm:2; peer = b.atm:2; }
            }
            parallel {
                test y { type = full (blocksize=8K, nbytes=8M); protocol = tcp (nodelay=1);
                         own = b.atm:3; peer = c.atm:3; }
                test y_rx { type = sink (blocksize=8K); own = c.atm:3; peer = b.atm:3; }
            }
        }
    }
}
"""


def test_a_serial_pair_beside_a_long_connection_shares_its_port():
    """Byte-count steps in a serial block inside a parallel one (refused before,
    when such steps could only run as separate simulations on an idle network):
    y starts when x ends, while `long` still fills the port to c."""
    df = cellbench.run(BESIDE).to_pandas().set_index("test")
    assert df.completed.all()
    assert df.start_s["x"] == df.start_s["long"] == 0
    assert df.start_s["y"] == df.end_s["x"] < df.end_s["long"]
    assert df.limit_evidence["y"].startswith("2 connections share the port to c.atm")
    # The same y alone on the network (what a separate simulation gave) is faster.
    alone = BESIDE.replace("duration=6", "duration=0.001")
    lone = cellbench.run(alone).to_pandas().set_index("test")
    assert lone.start_s["y"] > lone.end_s["long"]
    assert df.throughput_bps["y"] < 0.8 * lone.throughput_bps["y"]


def test_results_stored_with_serial_stages_still_read(tmp_path):
    """Results written when serial steps ran as separate simulations carry a
    ``stage`` column in every table: they still load, show and plot."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "old"
    cellbench.run(EXAMPLES / "serial-parallel.netspec", out=out, series=True)
    # Such results were format 2: a part per run, no manifest.
    (out / "manifest.json").unlink()
    meta = json.loads((out / "result.json").read_text())
    meta["format_version"] = 2
    (out / "result.json").write_text(json.dumps(meta))
    for folder in ("runs", "ports", "queue"):
        for part in (out / folder).glob("part-*.parquet"):
            t = pq.read_table(part)
            stage = (
                [int(c > 2) for c in t.column("connection").to_pylist()]
                if (folder == "runs")
                else [0] * t.num_rows
            )
            pq.write_table(t.add_column(3, "stage", pa.array(stage, pa.int64())), part)
            part.rename(part.with_name("part-000000.parquet"))  # format 2's name (one run)
    res = results.load(out)
    df = res.to_pandas()
    assert list(df.stage) == [0, 0, 0, 1, 1] and list(df.connection) == [0, 1, 2, 3, 4]
    assert list(res.summary().test) == ["a1", "b1", "a2", "a3", "b3"]
    assert main(["show", str(out)]) == 0
    png = tmp_path / "q.png"
    assert main(["plot", str(out), "--kind", "queue", "-o", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


REPLACED = """
testbed {
    host a { profile = alpha-3000; phy = oc12c; }
    host b { profile = alpha-3000; phy = oc12c; }
}
cluster {
    test t { type = full (blocksize=8K, nbytes=256K); own = a:1; peer = b:1; }
    test r { type = sink (blocksize=8K); own = b:1; peer = a:1; }
}
"""


def test_a_testbed_whose_every_host_was_replaced_does_not_describe_the_presets(tmp_path):
    """Issue 31: the preset's description (two SPARCstation IPCs on TAXI) stayed in the
    result, show and the page of a run on two Alphas on OC-12c the file defined."""
    from cellbench.plots.report.page import write

    out = tmp_path / "r.result"
    res = cellbench.run(REPLACED, out=out)
    said = res.meta["testbed"]["description"]
    assert "SPARCstation IPC" not in said
    assert said.startswith("the experiment file's own hosts (a, b) on the lan-buffers preset's")
    page = tmp_path / "r.html"
    write([results.load(out)], page)
    assert "SPARCstation IPC" not in page.read_text() and "own hosts (a, b)" in page.read_text()
    # One host of the preset's kept (the other from its defaults): the preset's words stay.
    kept = cellbench.run(REPLACED.replace("host b { profile = alpha-3000; phy = oc12c; }", ""))
    assert "SPARCstation IPC" in kept.meta["testbed"]["description"]
    # New defaults for every host the preset does not name replace them too.
    text = REPLACED.split("cluster")[0].replace("host a", "defaults").replace("host b", "host c")
    both = cellbench.run(text + "cluster" + REPLACED.split("cluster")[1])
    assert "own hosts (a, b)" in both.meta["testbed"]["description"]
    # Hosts a --testbed file gave count as given beside an experiment's (empty)
    # testbed block, which kept the preset's words.
    given = tmp_path / "alphas.testbed"
    given.write_text(REPLACED.split("cluster")[0])
    beside = cellbench.run("testbed { }\ncluster" + REPLACED.split("cluster")[1],
                           testbed=str(given))  # fmt: skip
    assert "own hosts (a, b)" in beside.meta["testbed"]["description"]
