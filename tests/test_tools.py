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


# The real tools' formats these tests check, line by line:
# ttcp.c (SGI/BRL ttcp with -b and -f):
#   "ttcp-t: buflen=%d, nbuf=%d, align=%d/%d, port=%d" [", sockbufsize=%d"] "  %s  -> %s"
#   "ttcp%s: %.0f bytes in %.2f real seconds = %s/sec +++"   (outfmt: "%.2f Mbit" etc.)
#   "ttcp%s: %d I/O calls, msec/call = %.2f, calls/sec = %.2f"  (msec/call = 1024*real/calls)
#   "ttcp%s: %s" with prusage's System V form "%Uuser %Ssys %Ereal %P"
#   mes(): "ttcp-t: socket", "ttcp-t: sndbuf", "ttcp-t: nodelay", "ttcp-t: connect",
#   "ttcp-r: rcvbuf", "ttcp-r: accept from %s" (TCP only)
# netperf nettest_bsd.c:
#   send_tcp_stream: tput_title (4 lines, %s/sec = format_units()), tput_fmt_1
#   "%6d %6d %6d    %-6.2f   %7.2f   %s"
#   send_udp_stream: tput_title (3 lines), tput_fmt_1 "%6d  %6d   %-7.2f   %7d %6d    %7.2f"
#   and "%6d           %-7.2f   %7d           %7.2f"
#   send_tcp_rr: "TCP REQUEST/RESPONSE TEST", tput_title (4 lines and a blank),
#   tput_fmt_1_line_1 "%-6d %-6d %-6d   %-6d  %-6.2f   %7.2f   " (local send and receive
#   buffers, request, response, elapsed, transactions per second) and tput_fmt_1_line_2
#   "%-6d %-6d" (the remote's buffers)
RATE = r"(\d+\.\d\d)"
USAGE = r"(\d+)\.(\d)user (\d+)\.(\d)sys (\d+):(\d\d)real (\d+)%"


def test_ttcp_transmitter_report_in_ttcp_units() -> None:
    r = cli("ttcp", "-t", "-s", "-n", "512", "-l", "8192", "-f", "m", "B")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # Header line, then mes("socket"), mes("connect").
    assert lines[0] == "ttcp-t: buflen=8192, nbuf=512, align=16384/0, port=5001  tcp  -> B"
    assert lines[1:3] == ["ttcp-t: socket", "ttcp-t: connect"]
    # The rate line.
    m = re.fullmatch(rf"ttcp-t: 4194304 bytes in {RATE} real seconds = {RATE} Mbit/sec \+\+\+",
                     lines[3])  # fmt: skip
    assert m, lines[3]
    secs, mbit = float(m[1]), float(m[2])
    # ttcp's Mbit is 2^20 bits: the printed rate is bytes*8/2^20/seconds.
    assert mbit == pytest.approx(4194304 * 8 / 2**20 / secs, rel=0.01)
    assert 10 < mbit < 30
    # The I/O calls line: msec/call is 1024 * real seconds / calls, as ttcp.c computes it.
    m = re.fullmatch(rf"ttcp-t: 512 I/O calls, msec/call = {RATE}, calls/sec = {RATE}", lines[4])
    assert m, lines[4]
    assert float(m[1]) == pytest.approx(1024 * secs / 512, abs=0.02)
    assert float(m[2]) == pytest.approx(512 / secs, rel=0.01)
    # The prusage line: user and system tenths, real m:ss, CPU percent.
    m = re.fullmatch(rf"ttcp-t: {USAGE}", lines[5])
    assert m, lines[5]
    user, system = float(f"{m[1]}.{m[2]}"), float(f"{m[3]}.{m[4]}")
    assert user == 0.0 and 0.3 * secs < system <= secs
    assert int(m[5]) * 60 + int(m[6]) == int(secs)
    assert 30 <= int(m[7]) <= 100
    assert int(m[7]) == pytest.approx(100 * system / secs, abs=3)
    assert lines[6].startswith("# limited by ")


def test_ttcp_names_its_receiving_host() -> None:
    r = cli("ttcp", "-t", "-n", "16", "-D", "B2")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].endswith("  tcp  -> B2")
    assert lines[1:4] == ["ttcp-t: socket", "ttcp-t: nodelay", "ttcp-t: connect"]
    r = cli("ttcp", "-t", "-n", "16", "--testbed", "wan-window", "alpha-west")
    assert r.returncode == 2 and "alpha-west is the transmitter" in r.stderr
    r = cli("ttcp", "-t", "-n", "16", "--testbed", "wan-window", "nosuch")
    assert r.returncode == 2 and "host 'nosuch' is not in testbed 'wan-window'" in r.stderr


def test_ttcp_receiver_sees_the_lockstep() -> None:
    r = cli("ttcp", "-r", "-s", "-n", "256", "-f", "m", "--sndbuf", "16384", "-b", "24576")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # -b: sockbufsize in the header, mes("rcvbuf"); TCP: the accept line.
    assert lines[0] == (
        "ttcp-r: buflen=8192, nbuf=256, align=16384/0, port=5001, sockbufsize=24576  tcp"
    )
    assert lines[1:4] == ["ttcp-r: socket", "ttcp-r: rcvbuf", "ttcp-r: accept from A"]
    m = re.fullmatch(rf"ttcp-r: 2097152 bytes in {RATE} real seconds = {RATE} Mbit/sec \+\+\+",
                     lines[4])  # fmt: skip
    assert m, lines[4]
    assert float(m[2]) < 2.0
    # -r counts its read calls: at least one per 8 KB buffer.
    m = re.fullmatch(rf"ttcp-r: (\d+) I/O calls, msec/call = {RATE}, calls/sec = {RATE}", lines[5])
    assert m, lines[5]
    assert int(m[1]) >= 256
    assert float(m[2]) == pytest.approx(1024 * float(lines[4].split()[4]) / int(m[1]), rel=0.01)
    assert re.fullmatch(rf"ttcp-r: {USAGE}", lines[6]), lines[6]


def test_ttcp_udp_and_kilobytes() -> None:
    r = cli("ttcp", "-t", "-u", "-n", "64", "-f", "K")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # UDP: no connect line.
    assert lines[0].endswith("  udp  -> B") and lines[1:] and lines[2].startswith("ttcp-t: 524288")
    assert " KB/sec +++" in lines[2]
    r = cli("ttcp", "-r", "-u", "-n", "64")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # UDP -r: no accept line; the I/O calls are its recvfrom calls, one per datagram.
    assert lines[0].endswith("port=5001  udp") and lines[1] == "ttcp-r: socket"
    assert not any("accept" in ln or "connect" in ln for ln in lines)
    got = int(re.match(r"ttcp-r: (\d+) bytes", lines[2])[1])
    calls = int(re.match(r"ttcp-r: (\d+) I/O calls", lines[3])[1])
    assert got == calls * 8192


def test_ttcp_is_refused_a_host_as_receiver() -> None:
    r = cli("ttcp", "-r", "B")
    assert r.returncode == 2 and "ttcp -r takes no host" in r.stderr


def test_netperf_tcp_stream_table() -> None:
    r = cli(
        "netperf", "-t", "TCP_STREAM", "-l", "2", "--", "-s", "16384", "-S", "16384", "-m", "8192"
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("TCP STREAM TEST to B")
    # tput_title, with its trailing blanks.
    assert lines[1:6] == [
        "Recv   Send    Send                          ",
        "Socket Socket  Message  Elapsed              ",
        "Size   Size    Size     Time     Throughput  ",
        "bytes  bytes   bytes    secs.    10^6bits/sec  ",
        "",
    ]
    # tput_fmt_1: "%6d %6d %6d    %-6.2f   %7.2f   %s".
    m = re.fullmatch(r" 16384  16384   8192    2\.00     ([ \d]{4}\.\d\d)   ", lines[6])
    assert m, repr(lines[6])
    assert 10 < float(m[1]) < 30
    assert lines[7] == "" and lines[8].startswith("# limited by ")


def test_netperf_units() -> None:
    """-f: k, m, g are 10^3, 10^6, 10^9 bits; K, M, G are 2^10, 2^20, 2^30 bytes."""
    rates = {}
    for f, unit in [("m", "10^6bits"), ("k", "10^3bits"), ("K", "KBytes"), ("M", "MBytes")]:
        r = cli("netperf", "-l", "1", "-f", f)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert lines[4] == f"bytes  bytes   bytes    secs.    {unit}/sec  "
        rates[f] = float(lines[6][33:40])
    bits = rates["m"] * 1e6
    assert rates["k"] == pytest.approx(bits / 1e3, rel=1e-3)
    assert rates["K"] == pytest.approx(bits / 8 / 1024, rel=1e-3)
    assert rates["M"] == pytest.approx(bits / 8 / 2**20, abs=0.01)


def test_netperf_udp_stream_rows() -> None:
    r = cli("netperf", "-t", "UDP_STREAM", "-l", "1", "--", "-m", "4096", "-s", "32768")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("UDP UNIDIRECTIONAL SEND TEST to B")
    assert lines[1:5] == [
        "Socket  Message  Elapsed      Messages                ",
        "Size    Size     Time         Okay Errors   Throughput",
        "bytes   bytes    secs            #      #   10^6bits/sec",
        "",
    ]
    # Send row "%6d  %6d   %-7.2f   %7d %6d    %7.2f", receive row
    # "%6d           %-7.2f   %7d           %7.2f".
    send = re.fullmatch(r" 32768    4096   1\.00      ([ \d]{6}\d) ([ \d]{5}\d)    ([ \d.]{7})",
                        lines[5])  # fmt: skip
    recv = re.fullmatch(r" 52428           1\.00      ([ \d]{6}\d)           ([ \d.]{7})", lines[6])
    assert send and recv, lines[5:7]
    sent, received = int(send[1]), int(recv[1])
    assert 0 < received <= sent
    assert float(send[3]) == pytest.approx(sent * 4096 * 8 / 1e6, rel=0.02)
    assert float(recv[2]) == pytest.approx(received * 4096 * 8 / 1e6, rel=0.02)


def test_netperf_clamps_buffers_as_run_does() -> None:
    r = cli("netperf", "-l", "1", "--", "-s", "99999", "-m", "8192")
    assert r.returncode == 0, r.stderr
    assert r.stderr == (
        "cellbench: note: netperf -s: SO_SNDBUF 99999 exceeds 52428, the largest socket "
        "buffer sunos411 accepts: using 52428\n"
    )
    assert r.stdout.splitlines()[6].startswith(" 52428  52428   8192")


def test_netperf_elapsed_is_the_test_length_on_every_testbed() -> None:
    """europe-vp unspaced: the policed VP stalls the sender; netperf's timer still ends at -l."""
    r = cli("netperf", "-l", "3", "--testbed", "europe-vp")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[6][:31] == " 52428  52428   8192    3.00   "


def _rr(*options: str, seconds: str = "2") -> tuple[list[str], float]:
    r = cli("netperf", "-t", "TCP_RR", "-l", seconds, "--", *options)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # tput_fmt_1_line_1: "%-6d %-6d %-6d   %-6d  %-6.2f   %7.2f   ".
    fields = r"[\d ]{6} [\d ]{6} [\d ]{6}   [\d ]{6}  [\d.]{4}[\d. ]{2}"
    m = re.fullmatch(fields + r"   ([ \d]{4}\d*\.\d\d)   ", lines[6])
    assert m, repr(lines[6])
    return lines, float(m[1])


def test_netperf_tcp_rr_table() -> None:
    """Every line of send_tcp_rr's report, and the rate as transactions / elapsed."""
    lines, rate = _rr("-s", "16K", "-S", "24576", "-r", "64,512")
    assert lines[0] == "TCP REQUEST/RESPONSE TEST to B (simulated: testbed lan-buffers)"
    assert lines[1:6] == [
        "Local /Remote",
        "Socket Size   Request  Resp.   Elapsed  Trans.",
        "Send   Recv   Size     Size    Time     Rate         ",
        "bytes  Bytes  bytes    bytes   secs.    per sec   ",
        "",
    ]
    # Line 1: the local (netperf -s) buffers, the sizes, the elapsed time; line 2 the remote's.
    assert lines[6].startswith("16384  16384  64       512     2.00   ")
    assert lines[7] == "24576  24576 "
    assert lines[8] == "" and lines[9].startswith("# limited by ")
    # The rate is whole transactions over the 2 s: a multiple of 0.5 per second.
    assert rate * 2 == pytest.approx(round(rate * 2), abs=1e-6) and rate > 100
    # -r N sizes both messages, as netperf's break_args does.
    lines, _ = _rr("-r", "32")
    assert lines[6].startswith("52428  52428  32       32      2.00   ")


def test_netperf_tcp_rr_rate_follows_the_mechanism() -> None:
    """SPARCstation IPCs on the LAN: a 1-byte transaction is a round trip plus both
    hosts' work (no timer: each ACK rides on the next message); larger responses take
    longer; a response SunOS appends in pieces (9148 = 4 KB + 4 KB + 956) leaves its
    short tail to Nagle, which waits for the client's delayed ACK: one transaction
    per 200 ms tick, until -D (TCP_NODELAY) sends it at once."""
    lines, one = _rr()
    evidence = lines[9]
    period_ms = float(re.search(r"one every ([\d.]+) ms", evidence)[1])
    rtt_ms = float(re.search(r"at least ([\d.]+) ms", evidence)[1])
    assert period_ms == pytest.approx(1000 / one, rel=1e-3)
    # The round trip is the shortest one seen (host costs vary by ±10% a piece).
    assert rtt_ms < period_ms < 3 * rtt_ms
    _, kilo = _rr("-r", "1,1024")
    _, four = _rr("-r", "1,4096")
    assert one > kilo > four > 100
    lines, tail = _rr("-r", "1,9148")
    assert tail == pytest.approx(5.0, abs=0.5) and lines[9].startswith("# limited by lockstep")
    _, nodelay = _rr("-r", "1,9148", "-D")
    assert nodelay > 20 * tail
    # Same seed, same report, byte for byte.
    assert _rr("-r", "1,1024")[0] == _rr("-r", "1,1024")[0]


def test_netperf_tcp_rr_on_the_wan_is_a_round_trip_per_transaction() -> None:
    """wan-window's 8.8 ms path: a 1-byte transaction takes the round trip and a little
    host work; the explanation says so (not a stream's window bound)."""
    r = cli("netperf", "-t", "TCP_RR", "-l", "2", "--testbed", "wan-window")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    rate = float(lines[6].split()[5])
    assert 1000 / 9.5 < rate < 1000 / 8.8, rate
    assert lines[9].startswith("# limited by undetermined: request/response: "), lines[9]


@pytest.mark.parametrize(
    "args, message",
    [
        (["netperf", "-l", "2", "--", "-x", "1"], "netperf test option '-x'"),
        (["netperf", "-t", "UDP_RR"], "the simulator runs TCP_STREAM, UDP_STREAM, TCP_RR"),
        (["netperf", "-t", "TCP_RR", "--", "-r", "abc"], "-r must be a whole number of bytes"),
        (["netperf", "-t", "TCP_RR", "--", "-r", "0,1"], "-r must be >= 1"),
        (["netperf", "-t", "TCP_RR", "--", "-r", "1,2,3"], "expected REQUEST,RESPONSE"),
        (["netperf", "-t", "TCP_RR", "--", "-r"], "-r needs a value"),
        (["netperf", "-t", "TCP_RR", "--", "-m", "1"], "expected one of -s, -S, -r, -D"),
        (["ttcp", "-l", "0"], "-l must be >= 1"),
        (["netperf", "--testbed", "wan-window", "-H", "B"], "host 'B' is not in testbed"),
        (["ttcp", "--testbed", "nowhere"], "expected one of"),
    ],
)
def test_bad_input(args: list[str], message: str) -> None:
    r = cli(*args)
    assert r.returncode == 2
    assert message in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_netperf_tcp_rr_on_real_hosts_is_refused_not_simulated(monkeypatch, capsys) -> None:
    """TCP_RR on an engine whose agents have no request/response traffic: one line
    naming the option and why, and nothing run (it ran on the simulator and said
    "simulated" before)."""
    from cellbench.cli import main
    from cellbench.engines.real import RealEngine

    argv = ["netperf", "-t", "TCP_RR", "-l", "1", "--engine", "real"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert err == (
        "cellbench: error: netperf -t TCP_RR --engine real: the real engine's agents have "
        "no request/response traffic yet; TCP_RR runs on --engine sim\n"
    )
    # The refusal is the engine's own word: an engine that ran rr traffic would go on
    # to its hosts (here, none given).
    monkeypatch.setattr(RealEngine, "traffic_not_yet", {})
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--engine real needs two --host NAME=ADDRESS" in err, err


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
