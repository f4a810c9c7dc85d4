"""`cellbench ttcp` and `cellbench netperf`: the classic tools' own reports, on the simulator."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cellbench", *args], capture_output=True, text=True, timeout=120
    )


def test_ttcp_transmitter_report_in_ttcp_units() -> None:
    r = cli("ttcp", "-t", "-s", "-n", "512", "-l", "8192", "-f", "m")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "ttcp-t: buflen=8192, nbuf=512, align=16384/0, port=5001  tcp  -> B"
    m = re.fullmatch(
        r"ttcp-t: 4194304 bytes in ([\d.]+) real seconds = ([\d.]+) Mbit/sec \+\+\+", lines[3]
    )
    assert m, lines[3]
    secs, mbit = float(m[1]), float(m[2])
    # ttcp's Mbit is 2^20 bits: the printed rate is bytes*8/2^20/seconds.
    assert mbit == pytest.approx(4194304 * 8 / 2**20 / secs, rel=0.01)
    assert 10 < mbit < 30
    assert lines[4].startswith("ttcp-t: 512 I/O calls, msec/call = ")


def test_ttcp_receiver_sees_the_lockstep() -> None:
    r = cli("ttcp", "-r", "-s", "-n", "256", "-f", "m", "--sndbuf", "16384", "-b", "24576")
    assert r.returncode == 0, r.stderr
    rate = float(re.search(r"= ([\d.]+) Mbit/sec", r.stdout)[1])
    assert rate < 2.0


def test_ttcp_udp_and_kilobytes() -> None:
    r = cli("ttcp", "-t", "-u", "-n", "64", "-f", "K")
    assert r.returncode == 0, r.stderr
    assert "  udp  -> B" in r.stdout and " KB/sec +++" in r.stdout


def test_netperf_tcp_stream_table() -> None:
    r = cli(
        "netperf", "-t", "TCP_STREAM", "-l", "2", "--", "-s", "16384", "-S", "16384", "-m", "8192"
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("TCP STREAM TEST to B")
    assert lines[4] == "bytes  bytes   bytes    secs.    10^6bits/sec"
    fields = lines[6].split()
    assert fields[:3] == ["16384", "16384", "8192"]
    assert float(fields[3]) == pytest.approx(2.0, abs=0.05)
    assert 10 < float(fields[4]) < 30


@pytest.mark.parametrize(
    "args, message",
    [
        (["netperf", "-l", "2", "--", "-s", "99999"], "send buffer 99999 bytes is out of range"),
        (["netperf", "-l", "2", "--", "-x", "1"], "netperf test option '-x'"),
        (["netperf", "-t", "UDP_RR"], "only TCP_STREAM"),
        (["ttcp", "-l", "0"], "-l must be >= 1"),
        (["ttcp", "--testbed", "hetero-lan"], "not yet simulable"),
        (["netperf", "--testbed", "wan-window", "-H", "B"], "host 'B' is not in testbed"),
        (["ttcp", "--testbed", "nowhere"], "expected one of"),
    ],
)
def test_bad_input(args: list[str], message: str) -> None:
    r = cli(*args)
    assert r.returncode == 2
    assert message in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_the_wan_presets_run_between_their_own_hosts() -> None:
    """A WAN preset's pair: the Alphas 600 km apart, with the trunk's 8.8 ms round trip."""
    r = cli("ttcp", "-t", "-s", "-n", "64", "-l", "65536", "--sndbuf", "131072",
            "--rcvbuf", "131072", "--testbed", "wan-window", "-f", "m")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].endswith("tcp  -> alpha-east")
    last = r.stdout.splitlines()[-1]
    assert last.startswith("# limited by window:")
    rtt_ms = float(re.search(r"RTT ([\d.]+) ms", last)[1])
    assert 8.8 < rtt_ms < 10.0
    # europe-vp, unspaced: the policed VP lets nothing through (netperf names the receiver).
    r = cli("netperf", "-l", "2", "--testbed", "europe-vp")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("TCP STREAM TEST to sparc10-b (simulated: testbed europe-vp)")
    assert "# limited by policing" in r.stdout
