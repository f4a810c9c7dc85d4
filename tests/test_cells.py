"""The simulator's ATM cell tester: `run --cells`, the `tester { }` block, `cellbench
cells`, `plot --kind iat`; its captures are streamed, the same in both fidelities,
and every bad input is one line."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cellbench import _native, cells
from cellbench.experiment.plan import make_plan

EXPERIMENT = textwrap.dedent(
    """\
    testbed lan {
        host ws { profile = sparc-10; phy = oc3c; spacing_us = 19.45; }
        host sink { profile = sparc-10; phy = taxi100; }
    }
    tester { port = sink; }
    cluster {
        test t { type = full (blocksize=8K, nbytes=256K); protocol = tcp (window=32K);
                 own = ws:5001; peer = sink:5001; }
        test r { type = sink (blocksize=8K); protocol = tcp (window=32K);
                 own = sink:5001; peer = ws:5001; }
    }
    """
)


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cellbench", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


def one_error_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cellbench: error: "), r.stderr
    return lines[0]


@pytest.fixture
def experiment(tmp_path) -> Path:
    f = tmp_path / "t.netspec"
    f.write_text(EXPERIMENT)
    return f


def test_a_tester_block_writes_a_capture_beside_the_result(experiment, tmp_path):
    r = cli("run", str(experiment), "--out", str(tmp_path / "r"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    pcap = tmp_path / "r" / "cells" / "run0.pcap"
    assert f"leaving sink (switch output port 1 to host sink, taxi100) in {pcap}" in r.stderr
    side = json.loads((tmp_path / "r" / "cells" / "run0.pcap.json").read_text())
    assert side["cell_time_ps"] == 4_240_000 and side["phy"] == "taxi100"
    c = cells.read(pcap)
    # Every cell the port sent, as its counters say; the data segments' PDUs among them.
    from cellbench.experiment import results

    res = results.load(tmp_path / "r")
    port = res.ports().set_index("host").loc["sink"]
    assert c.cells == port["cells_out"] and c.vcs == {(0, 100): c.cells}
    assert c.pdus >= res.to_pandas()["data_segments"].iloc[0] + 2  # the SYN and the FIN too
    # The sender spaces its cells 19.45 µs apart: 19.45 / 4.24 = 4.6 -> 5 slots of TAXI.
    assert c.histogram()[0][0] == 5 and max(n for _, n in c.histogram()) == c.histogram()[0][1]
    # `cellbench cells` prints the same histogram.
    r = cli("cells", str(pcap), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [(h["slots"], h["cells"]) for h in doc["histogram"]] == c.histogram()
    assert doc["slot_us"] == 4.24 and doc["pdus"] == c.pdus
    # And plot --kind iat draws it, from the file or from the result.
    for target in (str(pcap), str(tmp_path / "r")):
        png = tmp_path / "iat.png"
        r = cli("plot", target, "--kind", "iat", "-o", str(png))
        assert r.returncode == 0, r.stderr
        assert png.read_bytes()[:4] == b"\x89PNG"
        png.unlink()


def test_cells_option_takes_a_port_or_an_adapter_and_lists_them_when_wrong(experiment, tmp_path):
    out = tmp_path / "a"
    r = cli("run", str(experiment), "--out", str(out), "--cells", "adapter:ws", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    c = cells.read(out / "cells" / "run0.pcap")
    # The adapter's own link: OC-3c with spacing counts unframed slots (2.726 µs).
    assert c.link.slot_ps == 2_726_337 and c.link.phy == "oc3c"
    line = one_error_line(cli("run", str(experiment), "--cells", "nowhere", cwd=tmp_path))
    for name in ("ws", "sink", "adapter:ws", "adapter:sink"):
        assert name in line
    assert not (tmp_path / "t.result").exists()
    line = one_error_line(cli("run", str(experiment), "--cells", "ws", "--engine", "emu"))
    assert "--pcap" in line


def test_a_bad_tester_block_is_an_error_at_its_position(tmp_path):
    for block, want in (
        ("tester { port = nowhere; }", ':5:17: cells "nowhere": no such'),
        ("tester { place = sink; }", ":5:10: found setting 'place', expected 'port'"),
        ("tester { slot_us = 2.7; }", "tester block without 'port'"),
        (
            "tester { port = sink; slot_us = 0; }",
            "a number > 0 and <= 1000000000000 for the tester's cell slot in µs",
        ),
    ):
        f = tmp_path / "bad.netspec"
        f.write_text(EXPERIMENT.replace("tester { port = sink; }", block))
        line = one_error_line(cli("run", str(f), "--check"))
        assert want in line, line


def spec_of(text: str, tmp_path: Path) -> dict:
    f = tmp_path / "x.netspec"
    f.write_text(text)
    return make_plan(f).task(0).spec


@pytest.mark.parametrize("place", ["sink", "adapter:ws", "ws"])
def test_train_and_per_cell_write_identical_captures(tmp_path, place):
    spec = spec_of(EXPERIMENT, tmp_path)
    files = []
    for per_cell in (False, True):
        path = tmp_path / f"{per_cell}.pcap"
        out = _native.simulate(
            spec | {"per_cell": per_cell, "cells": {"place": place, "path": str(path)}}
        )
        assert out["cells"]["cells"] > 0
        files.append(path.read_bytes())
    assert files[0] == files[1]


def test_tshark_decodes_a_simulated_capture(experiment, tmp_path):
    import shutil

    tshark = shutil.which("tshark")
    assert tshark is not None, "tshark not found: install Debian's tshark (scripts/test.sh does)"
    spec = spec_of(EXPERIMENT, tmp_path)
    path = tmp_path / "c.pcap"
    out = _native.simulate(spec | {"cells": {"place": "sink", "path": str(path)}})
    r = subprocess.run(
        [tshark, "-r", str(path), "-T", "fields", "-e", "frame.time_relative", "-e", "atm.vpi",
         "-e", "atm.vci", "-e", "atm.payload_type", "-e", "atm.cell_loss_priority"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert len(rows) == out["cells"]["cells"]
    assert {(vpi, vci, clp) for _, vpi, vci, _, clp in rows} == {("0", "100", "0")}
    # AUU (PTI 1) on each PDU's last cell, as many as the capture's PDUs.
    assert sum(int(pti) == 1 for *_, pti, _ in rows) == out["cells"]["pdus"]
    # tshark's times are the simulator's, to the nanosecond the file keeps.
    c = cells.read(path)
    first = float(rows[0][0])
    assert abs(float(rows[-1][0]) - first - (c.last_s - c.first_s)) < 1e-8


# The peak RSS from /proc (VmHWM): getrusage's ru_maxrss survives exec, so a child of
# pytest would report pytest's own.
MEMORY = """
import sys, json
from cellbench import _native
spec = json.loads(sys.argv[1])
out = _native.simulate(spec)
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
print(json.dumps({"cells": (out.get("cells") or {}).get("cells"), "maxrss_kb": int(hwm)}))
"""


def test_a_16_mb_transfers_cells_stream_to_the_file_within_50_mb(tmp_path):
    spec = spec_of(EXPERIMENT.replace("nbytes=256K", "nbytes=16M"), tmp_path)
    runs = {}
    for name, extra in (
        ("without", {}),
        ("with", {"cells": {"place": "sink", "path": str(tmp_path / "m.pcap")}}),
    ):
        r = subprocess.run(
            [sys.executable, "-c", MEMORY, json.dumps(spec | extra)],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        runs[name] = json.loads(r.stdout)
    # 16 MB in 9140-byte segments of 192 cells: about 352,000 cells, 24 MB of pcap.
    assert runs["with"]["cells"] > 350_000
    assert os.path.getsize(tmp_path / "m.pcap") > 24_000_000
    rss_mb = runs["with"]["maxrss_kb"] / 1024
    assert rss_mb < 50, runs
    # Held in memory the cells' records alone would be some 20 MB more than without.
    assert runs["with"]["maxrss_kb"] - runs["without"]["maxrss_kb"] < 5 * 1024, runs


def erf_header(linktype: int = 197) -> bytes:
    return struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, linktype)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.binary(max_size=300), header=st.booleans())
def test_any_bytes_give_a_histogram_or_one_line(tmp_path, body, header):
    path = tmp_path / "f.pcap"
    path.write_bytes((erf_header() if header else b"") + body)
    try:
        c = cells.read(path, slot_us=2.726)
    except cells.CaptureError as e:
        assert "\n" not in str(e)
    else:
        assert len(c.slots) == max(c.cells - 1, 0)


def test_bad_captures_are_one_line_errors(tmp_path):
    good = tmp_path / "g.pcap"
    path = tmp_path / "b.pcap"
    cases = {
        "no such capture file": None,
        "not a pcap file": b"hello world, not a pcap" * 2,
        "holds AAL5 PDUs (SunATM, link type 123), not cells": erf_header(123),
        # (an Ethernet capture was named SunATM too)
        "holds Ethernet frames (link type 1), not cells": erf_header(1),
        "record length 0 and wire length 52, expected a record length of 68..=68": erf_header()
        + struct.pack("<IIII", 0, 0, 68, 68)
        + bytes(8)
        + bytes([3, 4, 0, 0, 0, 0, 0, 52])
        + bytes(52),
        "truncated": erf_header() + b"\x00" * 20,
    }
    for want, data in cases.items():
        if data is not None:
            path.write_bytes(data)
        target = path if data is not None else tmp_path / "missing.pcap"
        line = one_error_line(cli("cells", str(target), "--slot-us", "2.726"))
        assert want in line, line
    good.write_bytes(erf_header())
    line = one_error_line(cli("cells", str(good)))
    assert "--phy" in line and "g.pcap.json not found" in line
    (tmp_path / "g.pcap.json").write_text("{not json")
    assert "bad JSON" in one_error_line(cli("cells", str(good)))
    (tmp_path / "g.pcap.json").write_text('{"cell_time_ps": -1}')
    assert "cell_time_ps" in one_error_line(cli("cells", str(good)))
    assert "--vc 0-32" in one_error_line(cli("cells", str(good), "--phy", "oc3c", "--vc", "0-32"))
    r = cli("cells", str(good), "--phy", "oc3c")
    assert r.returncode == 0 and "0 cells" in r.stdout and "fewer than two cells" in r.stdout


def test_reproduce_europe_vp_tester_shows_both_drivers_patterns_in_the_capture(tmp_path):
    """The study's IAT figures (docs/design.md §5), read from the tester's capture of each
    run: 2.2.9 keeps the spacing interval and stalls 7-8 slots every 21-22 cells; 2.3.0
    sends bursts of 6 cells back to back, burst starts ~40 slots apart (within 10%)."""
    out = tmp_path / "t"
    r = cli("reproduce", "europe-vp", "--part", "tester", "--json", "--out", str(out))
    assert r.returncode == 0, r.stderr
    drivers = {d["driver"]: d for d in json.loads(r.stdout)["drivers"]}
    assert set(drivers) == {"2.2.9", "2.3.0"}
    for d in drivers.values():
        # The pattern is the capture's, as `cellbench cells` reads it again.
        c = cells.read(d["capture"])
        assert [{"slots": k, "cells": n} for k, n in c.histogram()] == d["histogram"]
        assert c.link.slot_ps == 2_726_000 and c.pdus > 50

    old = drivers["2.2.9"]
    # 22.3 Mb/s of cells: 19.01 µs = 7 slots of 2.726 µs.
    assert old["regular_slots"] == 7
    assert {s["increase_slots"] for s in old["stalls"]} == {7, 8}
    assert {s["after_cells"] for s in old["stalls"]} == {21, 22}
    new = drivers["2.3.0"]
    assert new["regular_slots"] == 1  # back to back
    pdus = cells.read(new["capture"]).pdus
    # Every burst of 6 cells but each PDU's last (172 = 28 x 6 + 4).
    assert sorted(set(new["bursts"])) == [4, 6] and new["bursts"].count(4) == pdus
    starts = new["burst_start_slots"]
    assert all(36 <= s <= 44 for s in starts), sorted(set(starts))
    # Each run's IAT figure names the driver that spaced its cells (the figures differ by it).
    for run, driver in ((0, "2.2.9"), (1, "2.3.0")):
        svg = tmp_path / f"iat{run}.svg"
        r = cli("plot", str(out), "--kind", "iat", "--run", str(run), "-o", str(svg))
        assert r.returncode == 0, r.stderr
        assert f"(driver {driver})" in svg.read_text(), driver
    # Both histograms printed, as a user sees them.
    r = cli("reproduce", "europe-vp", "--part", "tester")
    assert r.returncode == 0, r.stderr
    assert "driver 2.2.9 (spacing = cell-level)" in r.stdout
    assert "driver 2.3.0 (spacing = cell-burst)" in r.stdout
    assert r.stdout.count("inter-arrival time in cell slots") == 2


def test_reproduce_europe_vp_tester_refuses_the_vp_options():
    line = one_error_line(cli("reproduce", "europe-vp", "--part", "tester", "--no-stall"))
    assert "--no-stall" in line and "--part tester" in line


LAN = Path(__file__).resolve().parents[1] / "examples" / "lan-buffers.netspec"


def test_a_sweeps_captures_are_estimated_and_refused_past_the_bound(tmp_path, monkeypatch, capsys):
    """--cells on lan-buffers' 5000 runs would write ~300 GB without a word: --check
    prints the estimate, and a sweep past --cells-max (default 10 GiB) or the free
    space is refused before anything is written; --cells-runs captures chosen runs."""
    from cellbench.cli import main
    from cellbench.experiment import captures

    r = cli("run", str(LAN), "--cells", "ipc2.atm", "--check", "--out", str(tmp_path / "x"))
    assert one_error_line(r) == (
        "cellbench: error: --cells ipc2.atm: the captures would take some 297 GB (5000 run(s), "
        "~59.5 MB each), more than the 10 GiB captures may take without --cells-max: capture "
        "chosen runs (--cells-runs 0-9) or allow more (--cells-max SIZE)"
    )
    r = cli("run", str(LAN), "--cells", "ipc2.atm", "--cells-runs", "0-9,17", "--check")
    assert r.returncode == 0, r.stderr
    assert "5000 run(s), testbed lan-buffers; cell captures of 11 run(s): some 654 MB (an " \
        "estimate)" in r.stdout  # fmt: skip
    args = ["run", str(LAN), "--cells", "ipc2.atm", "--cells-runs", "0-9", "--out",
            str(tmp_path / "y")]  # fmt: skip
    r = cli(*args, "--cells-max", "500M")
    assert "more than --cells-max 524 MB" in one_error_line(r)
    assert not (tmp_path / "y").exists()  # refused before anything is written
    free = shutil.disk_usage(tmp_path)._replace(free=10**8)
    monkeypatch.setattr(captures.shutil, "disk_usage", lambda p: free)
    assert main([*args, "--check"]) == 2
    assert (
        f"more than the 100 MB free in {tmp_path}: capture chosen runs" in capsys.readouterr().err
    )
    for bad, why in (("9-3", "range 9-3 runs backwards"), ("5000", "run 5000 is past the "
                     "sweep's 5000 runs"), ("x", "expected run numbers and ranges")):  # fmt: skip
        assert why in one_error_line(cli(*args[:4], "--cells-runs", bad, "--check"))
    r = cli("run", str(LAN), "--cells-runs", "0", "--check")
    assert "--cells-runs chooses the runs a cell tester records" in one_error_line(r)


def test_the_estimate_is_near_a_real_capture_and_chosen_runs_alone_are_captured(tmp_path):
    out = tmp_path / "r"
    r = cli("run", str(LAN), "--set", "snd=16K", "--set", "rcv=32K,48K", "--set", "nbytes=2M",
            "--replications", "2", "--cells", "ipc2.atm", "--cells-runs", "1,3", "--out",
            str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (out / "cells").iterdir()) == [
        "run1.pcap", "run1.pcap.json", "run3.pcap", "run3.pcap.json"
    ]  # fmt: skip
    from cellbench.experiment import results
    from cellbench.experiment.plan import make_plan

    assert len(results.load(out).to_pandas()) == 4  # every run ran
    # The resume command a damaged result gives keeps the tester and its runs (the
    # plan's digest holds them: without, "started with a different experiment").
    cmd = results.resume_command(results.read_meta(out), out)
    assert "--cells ipc2.atm --cells-runs 1,3 --out" in cmd
    r = cli(*shlex.split(cmd)[1:])
    assert r.returncode == 0, r.stderr
    plan = make_plan(LAN, sets=["snd=16K", "rcv=32K", "nbytes=2M"], replications=1,
                            cells="ipc2.atm")  # fmt: skip
    size = (out / "cells" / "run1.pcap").stat().st_size
    # Data segments' cells and one ACK each (this port carries the data only): within 2%.
    assert size <= plan.capture_bytes <= 1.02 * size, (size, plan.capture_bytes)


def test_a_tester_where_no_cell_passes_says_so(tmp_path):
    """A tester on the port to the UDP sender (nothing comes back) wrote an empty
    capture without a word."""
    f = tmp_path / "u.netspec"
    f.write_text(
        EXPERIMENT.replace("port = sink", "port = ws")
        .replace("protocol = tcp (window=32K)", "protocol = udp")
        .replace("nbytes=256K", "nbytes=64K")
    )
    r = cli("run", str(f), "--out", str(tmp_path / "r"))
    assert r.returncode == 0, r.stderr
    assert (
        "cellbench: note: cells: 1 capture(s) hold no cell (run 0): nothing left ws in those "
        "runs; a port carries the cells to its host (data one way, ACKs the other), "
        "adapter:HOST the cells HOST sends"
    ) in r.stderr
    assert "note: cells:" not in cli("run", str(f), "--out", str(tmp_path / "s"),
                                     "--cells", "sink").stderr  # fmt: skip
