"""What an emulated run records besides its rows (``--engine emu``, as root): the
simulator's per-port counters by cause, ``--series`` (each port's occupancy from the
network, each TCP sender's cwnd from TCP_INFO), drawn by ``cellbench plot``."""

from __future__ import annotations

import shutil
import subprocess

import pandas as pd
from test_emu import CELLBENCH, pytestmark, rows  # noqa: F401 - the markers

import cellbench
from cellbench import wire
from cellbench.engines.emu import netns

#: OC-3c into a TAXI-100 port of 256 cells, Linux TCP with a 1 MB window: the port
#: fills and overflows.
LOSSY = """
testbed {
    host a { phy = oc3c; }
    host b { phy = taxi100; }
}
cluster {
    test t { type = full (blocksize=64K, nbytes=1M); protocol = tcp (window=1M);
             own = a:5001; peer = b:5001; }
    test r { type = sink (blocksize=64K); protocol = tcp (window=1M); own = b:5001; peer = a:5001; }
}
"""


def run(tmp_path, text: str, *args: str) -> subprocess.CompletedProcess:
    """``cellbench run`` on ``text``; then no namespace of that process is left (other
    runs on the machine may hold theirs meanwhile: only this one's are looked at)."""
    f = tmp_path / "exp.netspec"
    f.write_text(text)
    p = subprocess.Popen(
        CELLBENCH + ["run", str(f), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    out, err = p.communicate(timeout=180)
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"{netns.PREFIX}{p.pid}x" not in ns, ns
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def test_series_and_port_counters_as_the_simulators(tmp_path):
    r = run(tmp_path, LOSSY, "--engine", "emu", "--series", "--out", "s.result")
    assert r.returncode == 0, r.stderr
    res = cellbench.experiment.load(tmp_path / "s.result")
    ports, q, cw = res.ports(), res.queue_series(), res.cwnd_series()
    # The port to b fills to its buffer, and its series peaks where its counter does.
    to_b = ports[ports["host"] == "b"].iloc[0]
    assert to_b["peak_occupancy"] == 256 and to_b["cells_lost"] > 0
    assert not q.empty
    peaks = q.groupby("port")["cells"].max()
    for _, p in ports[ports["cells_out"] > 0].iterrows():
        assert peaks[p["port"]] == p["peak_occupancy"], p["host"]
    # Every lost cell has its cause; a tail-drop port loses by overflow only.
    causes = ["cells_lost_overflow", "cells_lost_ppd", "cells_lost_epd", "cells_lost_policed"]
    assert (ports[causes].sum(axis=1) + ports["cells_lost_clp"] == ports["cells_lost"]).all()
    assert to_b["cells_lost_overflow"] == to_b["cells_lost"] and to_b["pdus_damaged"] > 0
    # The series are on the run's clock: the port's first cells come as the sender
    # starts (its first TCP_INFO sample; the emulator started 0.3 s before the run).
    assert set(cw["connection"]) == {0}
    assert abs(q["t_s"].min() - cw["t_s"].min()) < 0.05, (q["t_s"].min(), cw["t_s"].min())
    assert (cw["cwnd"] > 0).all()
    for kind in ("queue", "cwnd"):
        out = tmp_path / f"{kind}.png"
        p = subprocess.run(
            CELLBENCH + ["plot", "s.result", "--kind", kind, "-o", str(out)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert p.returncode == 0, p.stderr
        assert out.stat().st_size > 0


def test_without_series_no_samples(tmp_path):
    r = run(tmp_path, LOSSY.replace("1M)", "256K)", 1), "--engine", "emu", "--out", "p.result")
    assert r.returncode == 0, r.stderr
    res = cellbench.experiment.load(tmp_path / "p.result")
    assert res.queue_series().empty and res.cwnd_series().empty
    assert isinstance(res.ports(), pd.DataFrame) and res.ports()["cells_out"].sum() > 0


def test_pcap_holds_the_cells_leaving_the_port_and_decodes(tmp_path):
    """Paced at 70 Mb/s nothing is lost: every cell the port to b sends is in the file,
    in time order, and they reassemble into the datagrams a sent (VC-mux: IPv4 from
    a to b), once per data PDU."""
    text = LOSSY.replace("window=1M);", "window=1M, pacing=70);", 1)
    r = run(tmp_path, text, "--engine", "emu", "--pcap", "b=b.pcap", "--out", "c.result")
    assert r.returncode == 0, r.stderr
    ports = pd.read_parquet(tmp_path / "c.result" / "ports").set_index("host")
    row = rows(tmp_path / "c.result").iloc[0]
    assert row["cells_lost"] == 0
    cells = wire.read_pcap(tmp_path / "b.pcap")
    assert f"pcap: {len(cells)} cells leaving port 1 (b)" in r.stderr
    assert len(cells) == ports.loc["b", "cells_out"] > 0
    times = [c["time_ps"] for c in cells]
    assert times == sorted(times)
    packets = wire.decode([c["cell"] for c in cells], encap="vc-mux")
    assert len(packets) == row["data_pdus_sent"]
    a, b = (bytes(int(x) for x in f"10.213.0.{i}".split(".")) for i in (1, 2))
    assert all(p[0] == 0x45 and p[12:16] == a and p[16:20] == b for p in packets)
    tshark = shutil.which("tshark")
    assert tshark is not None, "tshark not found: install Debian's tshark (scripts/test.sh does)"
    out = subprocess.run(
        [tshark, "-r", str(tmp_path / "b.pcap"), "-T", "fields", "-e", "atm.vci"]
        + ["-e", "atm.payload_type"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    fields = [line.split("\t") for line in out.stdout.splitlines()]
    assert len(fields) == len(cells)
    assert sum(int(pti) & 1 for _, pti in fields) == len(packets)  # AUU: one per PDU
    # Described as the simulator's captures are: `cellbench cells` knows the link's slot.
    from cellbench import cells as capture

    c = capture.read(tmp_path / "b.pcap")
    assert c.cells == len(cells) and c.pdus == len(packets)
    assert c.link.description == "switch output port 1 to host b" and c.link.slot_ps > 0


def test_pcap_is_refused_where_it_cannot_be_written(tmp_path):
    for args, want in (
        (["--pcap", "b=x.pcap"], "--pcap needs --engine emu"),
        (["--engine", "emu", "--pcap", "nosuch=x.pcap", "--check"], "the ports are 0 (a), 1 (b)"),
        (["--engine", "emu", "--pcap", "b", "--check"], "expected PORT=FILE"),
        (["--engine", "emu", "--pcap", f"b={tmp_path}/no/x.pcap"], f"cannot write {tmp_path}"),
    ):
        r = run(tmp_path, LOSSY, *args)
        assert r.returncode == 2 and want in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
