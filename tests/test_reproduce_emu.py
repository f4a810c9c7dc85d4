"""The studies on the emulator (``cellbench reproduce NAME --engine emu``): the rows'
keys, what the emulated network decides, the simulator's column, and nothing left
behind. As root, on Linux with /dev/net/tun; each run is cut to a second or two.

The machine is shared and loaded: the assertions are on what the network decides
(cells policed or not) and on orderings far apart, never on ``real_time``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cellbench.engines.emu import netns

CELLBENCH = [sys.executable, "-m", "cellbench"]


def needs_root(test):
    """As tests/test_emu.py: Linux, root and /dev/net/tun."""
    for mark in (
        pytest.mark.skipif(
            sys.platform != "linux", reason="namespaces and TUN devices are Linux's"
        ),
        pytest.mark.skipif(os.geteuid() != 0, reason="the emulator needs root"),
        pytest.mark.skipif(not os.path.exists("/dev/net/tun"), reason="needs /dev/net/tun"),
    ):
        test = mark(test)
    return test


#: The simulator's row keys every emulated row carries, and the emulator's own.
SIM_KEYS = {"throughput_bps", "segment_loss_rate", "cells_lost", "cells_policed", "limited_by"}
EMU_KEYS = {"engine", "kernel_cc", "retransmits", "lateness_us", "real_time"}


def namespaces() -> set[str]:
    return {
        line.split()[0]
        for line in subprocess.run(
            ["ip", "netns", "list"], capture_output=True, text=True
        ).stdout.splitlines()
    }


def reproduce(tmp_path, *args: str, timeout: int = 240) -> subprocess.CompletedProcess:
    """Run ``cellbench reproduce ARGS``; then none of the namespaces it made is left
    (their names carry its process id), and no TUN device in this namespace. (Other
    emulators and tests on the machine may make and remove theirs meanwhile: the
    whole list is compared only in tests/test_emu.py.)"""
    before = namespaces()
    p = subprocess.Popen(
        CELLBENCH + ["reproduce", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    out, err = p.communicate(timeout=timeout)
    ours = {n for n in namespaces() - before if n.startswith(f"{netns.PREFIX}{p.pid}x")}
    assert not ours, ours
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    assert netns.TUN not in links
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


@needs_root
def test_europe_vp_unspaced_cells_are_policed_spaced_ones_pass(tmp_path):
    """Linux CUBIC on the policed VP: unspaced, the UPC discards cells and the
    connection starves (the timed transfer still ends: no broken pipe, no hang);
    spaced at 19.45 µs nothing is discarded. The simulator's sunos411 beside it."""
    r = reproduce(
        tmp_path,
        "europe-vp", "--engine", "emu", "--kernel-cc", "cubic",
        "--set", "spacing_us=off,19.45", "--seconds", "1.5",
        "--json", "--out", "evp.result",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "2 of the study's 75 cases" in r.stderr
    assert "host profile and TCP flavour are ignored" in r.stderr
    out = json.loads(r.stdout)
    assert out["study"] == "europe-vp" and out["engine"] == "emu"
    rows = {row["spacing_us"]: row for row in out["rows"]}
    assert set(rows) == {None, 19.45}
    for row in rows.values():
        assert SIM_KEYS | EMU_KEYS | {"window", "write_size"} <= set(row), row
        assert row["engine"] == "emu" and row["kernel_cc"] == "cubic"
        assert set(row["lateness_us"]) == {"p50", "p99", "max"}
        assert row["window"] == 49152 and row["write_size"] == 8192
        assert row["sim_throughput_bps"] is not None
    off, on = rows[None], rows[19.45]
    assert off["cells_policed"] > 0 and off["met_contract"] is False
    assert on["cells_policed"] == 0 and on["met_contract"] is True
    assert on["throughput_bps"] > 5 * off["throughput_bps"]
    # The simulator's SunOS says the same of the two cases.
    assert on["sim_throughput_bps"] > 5 * off["sim_throughput_bps"]
    # The stored result carries the same keys; show reads it.
    shown = subprocess.run(
        CELLBENCH + ["show", "evp.result", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert shown.returncode == 0, shown.stderr
    stored = json.loads(shown.stdout)
    assert stored["meta"]["engine"] == "emu"
    for row in stored["rows"]:
        assert {"throughput_bps", "cells_lost", "cells_policed", "limited_by"} <= set(row)
        assert EMU_KEYS <= set(row), row


@needs_root
def test_wan_window_throughput_grows_with_the_window(tmp_path):
    """The 8.8 ms WAN with 8 KB and 64 KB windows: lossless, window-bound, so the
    larger window moves several times more (window / RTT: 7.4 and 59.6 Mb/s)."""
    r = reproduce(
        tmp_path,
        "wan-window", "--engine", "emu", "--set", "window=8K,64K", "--seconds", "1.5",
        "--no-sim", "--json", "--out", "ww.result",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = {row["window"]: row for row in json.loads(r.stdout)["rows"]}
    assert set(rows) == {8192, 65536}
    assert all(row["cells_lost"] == 0 for row in rows.values())
    assert "sim_throughput_bps" not in rows[8192]
    assert rows[65536]["throughput_bps"] > 3 * rows[8192]["throughput_bps"]
    assert rows[8192]["throughput_bps"] <= 1.1 * 8192 * 8 / 8.8e-3
    # plot reads the stored emulated result as the simulator's.
    plot = subprocess.run(
        CELLBENCH + ["plot", "ww.result", "--kind", "window", "-o", "w.png"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert plot.returncode == 0, plot.stderr
    assert (tmp_path / "w.png").stat().st_size > 0


@needs_root
def test_lan_buffers_one_cell_of_the_grid_beside_the_simulator(tmp_path):
    r = reproduce(
        tmp_path,
        "lan-buffers", "--engine", "emu", "--send-buffer", "52428", "--recv-buffer", "52428",
        "--seconds", "1", "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    [row] = json.loads(r.stdout)["rows"]
    assert (row["send_buffer"], row["recv_buffer"]) == (52428, 52428)
    assert SIM_KEYS | EMU_KEYS <= set(row)
    assert row["throughput_bps"] > 0 and row["sim_throughput_bps"] > 0
    # The simulator's IPCs are host-bound near 20 Mbit/s; the emulated link is 100 Mb/s.
    assert row["sim_limited_by"] is not None


@needs_root
def test_wan_mismatch_unpaced_bursts_overrun_the_taxi_port_paced_ones_do_not(tmp_path):
    """OC-3c into the 256-cell TAXI port: unpaced, Linux's bursts overrun it and the
    kernel retransmits; paced at 70 Mb/s by the adapter, no cell is lost."""
    r = reproduce(tmp_path, "wan-mismatch", "--engine", "emu", "--seconds", "1", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert len(rows) == 6
    by = {(row["case"], row["pacing_mbps"], row["transmitter"]): row for row in rows}
    unpaced, paced = by[(1, None, "alpha1")], by[(1, 70.0, "alpha1")]
    assert unpaced["cells_lost"] > 0 and unpaced["retransmits"] > 0
    assert unpaced["limited_by"] == "cell-loss"
    assert paced["cells_lost"] == 0
    assert all(row["sim_throughput_bps"] is not None for row in rows)


#: The DS-3's cell rate, 96,000 cells/s of 424 bits (ITU-T G.804's PLCP), in b/s.
DS3_CELL_BPS = 96_000 * 424


@needs_root
def test_wan_contention_flow_control_credits_lose_no_cell_tail_drop_does(tmp_path):
    """Linux TCP (CUBIC) from law4 and kclab2 into law1 under three of the flow-control
    schemes. Credits lose no cell by construction (a cell leaves a hop only with a
    credit for the next hop's buffer: sim::net::credit, which the emulator runs); UBR's
    256-cell port to law1, which the local stream fills at OC-3c, drops the remote
    stream's cells; under ERICA the remote ABR source, alone on the DS-3 trunk, is held
    to the explicit rate it is given there, at most the 0.9 target of the DS-3's cell
    rate, by the RM cells that come back. Each scheme a result of its own; the
    simulator's rows beside."""
    r = reproduce(
        tmp_path,
        "wan-contention", "--engine", "emu", "--part", "flow-control", "--kernel-cc", "cubic",
        "--set", "scheme=ubr-tail,credit,abr-er", "--seconds", "1.5", "--json", "--out", "fc",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "3 schemes (ubr-tail, credit, abr-er)" in r.stderr
    out = json.loads(r.stdout)
    assert out["study"] == "wan-contention" and out["engine"] == "emu"
    rows = {(row["scheme"], row["stream"]): row for row in out["rows"]}
    schemes = ("ubr-tail", "credit", "abr-er")
    assert set(rows) == {(s, t) for s in schemes for t in ("local", "remote")}
    for row in rows.values():
        assert SIM_KEYS | EMU_KEYS <= set(row), row
        assert row["kernel_cc"] == "cubic" and (row["local"], row["remote"]) == ("tcp", "tcp")
        assert row["throughput_bps"] > 0
        assert row["sim_throughput_bps"] is not None and row["sim_cells_lost"] is not None
    assert rows[("credit", "local")]["cells_lost"] == rows[("credit", "remote")]["cells_lost"] == 0
    assert rows[("ubr-tail", "remote")]["cells_lost"] > 0
    # The simulator's OSF/1 says the same of the two schemes.
    assert rows[("credit", "remote")]["sim_cells_lost"] == 0
    assert rows[("ubr-tail", "remote")]["sim_cells_lost"] > 0
    # ERICA: RM cells went out and came back, and the explicit rate held the remote ACR.
    abr = rows[("abr-er", "remote")]
    assert abr["abr_frm_sent"] > 0 and abr["abr_brm_returned"] > 0
    assert abr["abr_acr_bps"] <= 0.9 * DS3_CELL_BPS * 1.001
    assert abr["throughput_bps"] < abr["abr_acr_bps"]
    assert rows[("credit", "remote")].get("abr_acr_bps") is None
    # Each scheme stored as a result of its own, which show reads.
    for scheme in schemes:
        shown = subprocess.run(
            CELLBENCH + ["show", f"fc/{scheme}", "--format", "json"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["meta"]["engine"] == "emu"


@needs_root
def test_a_source_that_fails_is_one_line_naming_the_connection(tmp_path, monkeypatch, capsys):
    """An agent's failure (here the broken pipe a source meets when its sink has gone)
    ends the study with one line naming the connection, exit 2, no traceback, and the
    run's namespaces removed."""
    from cellbench.cli import main
    from cellbench.engines.real import agents

    def broken(spec: dict, limits: dict | None = None) -> dict:
        raise OSError("Broken pipe (os error 32)")

    monkeypatch.setattr(agents, "source", broken)
    monkeypatch.chdir(tmp_path)
    before = namespaces()
    argv = ["reproduce", "europe-vp", "--engine", "emu", "--set", "spacing_us=off"]
    assert main([*argv, "--seconds", "1", "--no-sim"]) == 2
    err = capsys.readouterr().err
    assert "connection sender (sparc10-a -> sparc10-b)" in err and "Broken pipe" in err
    assert "Traceback" not in err
    assert not {n for n in namespaces() - before if n.startswith(f"{netns.PREFIX}{os.getpid()}x")}


@pytest.mark.parametrize(
    "args,message",
    [
        (["wan-window", "--engine", "emu", "--dask", "x"], "--dask is not available"),
        (["lan-buffers", "--engine", "emu", "--nbytes", "1M"], "--seconds"),
        (["europe-vp", "--engine", "emu", "--series", "--out", "x"], "--series"),
        (["wan-window", "--kernel-cc", "cubic"], "--kernel-cc: for --engine emu"),
        (["wan-contention", "--engine", "emu", "--part", "credits"], "flow-control part only"),
        (["wan-contention", "--engine", "emu", "--set", "scheme=abr"], "no scheme 'abr'"),
    ],
)
def test_what_the_emulated_studies_refuse_is_one_line(tmp_path, args, message):
    r = reproduce(tmp_path, *args)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr


def test_the_emulated_studies_run_a_part_of_the_grid_and_say_so():
    """No root needed: the plans. europe-vp's default is its five spacings at one window
    and write size, timed; --full-grid is all 75 cases; --kernel-cc reaches every host."""
    from cellbench.reproduce import emu

    p, said = emu.plan("europe-vp", kernel_cc="reno")
    assert len(p.points) == 5 and "5 of the study's 75 cases" in said
    spacings = {str(p.param_values(i)["spacing_us"]) for i in range(5)}
    assert spacings == {"off", "19.45", "17.98", "16.5", "16.01"}
    assert all(h.kernel == {"kernel_cc": "reno"} for h in p.experiments[0].hosts)
    assert p.experiments[0].connections[0].traffic.duration_s == 4
    full, said = emu.plan("europe-vp", full_grid=True, seconds=1)
    assert len(full.points) == 75 and "--full-grid" not in said
    assert full.experiments[0].connections[0].traffic.duration_s == 1
    wider, _ = emu.plan("lan-buffers", sets=["snd=16K,20K,24K,28K"])
    assert len(wider.points) == 4 * 3
    # wan-contention: the five flow-control schemes, each a plan of the TCP mix.
    schemes, said = emu.plans("wan-contention", sets=["scheme=credit,abr-er"])
    assert [v for v, _ in schemes] == ["credit", "abr-er"]
    assert "2 schemes (credit, abr-er), each on 1 of the study's 4 cases" in said
    credit, abr = (q.experiments[0] for _, q in schemes)
    assert credit.testbed.switch["flow_control"] == "credit"
    assert "abr" in abr.testbed.switch and "abr" not in credit.testbed.switch
    assert len(emu.plans("wan-contention")[0]) == 5
    mismatch, said = emu.plan("wan-mismatch")
    assert len(mismatch.points) == 1 and "its 4 cases one after another" in said
    assert len(mismatch.experiments[0].connections) == 6
