"""The classic tools as front ends: ``cellbench ttcp`` and ``cellbench netperf``.

Both are thin: they build one run (a testbed preset, two hosts, one
connection) for the simulator and print what the real tool would have printed,
in its own units: ttcp's KB = 1024 bytes and Mbit = 2^20 bits; netperf's
throughput in 10^6 bits/s. A last comment line says what bound the transfer.
"""

from __future__ import annotations

import argparse
import sys

from cellbench import _native
from cellbench.cli.common import UsageError, byte_count, positive_int, seed
from cellbench.experiment.lang import ExperimentError
from cellbench.experiment.testbed import preset

# ttcp -f: format letter -> (divisor of bytes/s, unit label). Lower case: bits.
TTCP_FORMATS = {
    "k": (1024 / 8, "Kbit"),
    "K": (1024, "KB"),
    "m": (1024 * 1024 / 8, "Mbit"),
    "M": (1024 * 1024, "MB"),
    "g": (1024**3 / 8, "Gbit"),
    "G": (1024**3, "GB"),
}


def register(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser(
        "ttcp",
        help="ttcp against a simulated testbed (prints ttcp's own report)",
        description="Run a ttcp transfer between two hosts of a testbed preset on the simulator. "
        "Both ends run; -t prints the transmitter's report (the default), -r the receiver's.",
    )
    side = t.add_mutually_exclusive_group()
    side.add_argument("-t", action="store_true", help="report as the transmitter (default)")
    side.add_argument("-r", action="store_true", help="report as the receiver")
    t.add_argument("-s", action="store_true", help="source/sink a pattern (always so here)")
    t.add_argument("-l", type=byte_count("-l"), default=8192, help="buffer length (8192)")
    t.add_argument("-n", type=positive_int("-n"), default=2048, help="number of buffers (2048)")
    t.add_argument(
        "-b",
        type=byte_count("-b"),
        help="socket buffer size of the reporting side (SO_SNDBUF/SO_RCVBUF)",
    )
    t.add_argument("--sndbuf", type=byte_count("--sndbuf"), help="transmitter SO_SNDBUF")
    t.add_argument("--rcvbuf", type=byte_count("--rcvbuf"), help="receiver SO_RCVBUF")
    t.add_argument("-u", action="store_true", help="use UDP instead of TCP")
    t.add_argument("-p", type=positive_int("-p", 65535), default=5001, help="port (5001; cosmetic)")
    t.add_argument("-D", action="store_true", help="TCP_NODELAY on the transmitter")
    t.add_argument("-f", choices=sorted(TTCP_FORMATS), default="K", help="format: k,K,m,M,g,G")
    _common(t)
    t.set_defaults(func=ttcp)

    n = sub.add_parser(
        "netperf",
        help="netperf TCP_STREAM against a simulated testbed (prints netperf's table)",
        description="netperf -t TCP_STREAM -l SECONDS -- -s LOCAL_SNDBUF -S REMOTE_RCVBUF "
        "-m SEND_SIZE -M RECV_SIZE, run on the simulator.",
    )
    n.add_argument("-t", dest="test", default="TCP_STREAM", help="test name (TCP_STREAM)")
    n.add_argument("-l", dest="seconds", type=float, default=10.0, help="test length, s (10)")
    n.add_argument(
        "-H", dest="remote", help="remote host (default: the testbed's receiver, B on a LAN)"
    )
    n.add_argument("options", nargs=argparse.REMAINDER, help="-- -s N -S N -m N -M N")
    _common(n)
    n.set_defaults(func=netperf)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--testbed", default="lan-buffers", help="testbed preset (lan-buffers)")
    p.add_argument("--seed", type=seed(), default=1, help="seed (1)")


def _spec(testbed: str, seed: int, connection: dict, remote: str | None = None) -> dict:
    """One transfer on a preset, from its transmitter to `remote` (default its receiver)."""
    try:
        tb = preset(testbed)
        local, peer = tb.pair[0], remote or tb.pair[1]
        bed = tb.to_dict([local, peer])
    except ExperimentError as e:
        raise UsageError(str(e)) from None
    if tb.not_simulable:
        raise UsageError(tb.not_simulable)
    connection = {
        "transmitter": local,
        "receiver": peer,
        "mtu": tb.mtu,
        "encap": tb.encap,
        **connection,
    }
    return {
        "seed": seed,
        "switch": bed["switch"],
        "hosts": bed["hosts"],
        "trunks": bed["trunks"],
        "connections": [connection],
    }


def _fmt(rate_bytes: float, letter: str) -> str:
    div, unit = TTCP_FORMATS[letter]
    return f"{rate_bytes / div:.2f} {unit}"


def ttcp(args: argparse.Namespace) -> int:
    receiver = args.r
    sndbuf = args.sndbuf or (args.b if not receiver and args.b else 52428)
    rcvbuf = args.rcvbuf or (args.b if receiver and args.b else 52428)
    nbytes = args.l * args.n
    spec = _spec(
        args.testbed,
        args.seed,
        {
            "protocol": "udp" if args.u else "tcp",
            "sndbuf": sndbuf,
            "rcvbuf": rcvbuf,
            "nodelay": args.D,
            "traffic": {"type": "full", "blocksize": args.l, "nbytes": nbytes},
        },
    )
    c = _native.simulate(spec)["connections"][0]
    side, proto = (
        ("r", "udp" if args.u else "tcp") if receiver else ("t", "udp" if args.u else "tcp")
    )
    tag = f"ttcp-{side}"
    out = sys.stdout
    print(
        f"{tag}: buflen={args.l}, nbuf={args.n}, align=16384/0, port={args.p}  {proto}",
        end="",
        file=out,
    )
    print(f"  -> {c['receiver']}" if not receiver else "", file=out)
    print(f"{tag}: socket", file=out)
    if receiver:
        nbytes_seen, secs, calls = c["bytes_received"], c["receiver_seconds"], None
        print(f"{tag}: accept from A", file=out)
    else:
        nbytes_seen, secs, calls = c["bytes"], c["sender_seconds"], c["writes"]
        print(f"{tag}: connect", file=out)
    if not c["completed"]:
        print(f"{tag}: transfer did not complete within the simulated time limit", file=sys.stderr)
        return 1
    rate = nbytes_seen / secs if secs > 0 else 0.0
    print(
        f"{tag}: {nbytes_seen} bytes in {secs:.2f} real seconds = {_fmt(rate, args.f)}/sec +++",
        file=out,
    )
    if calls:
        print(
            f"{tag}: {calls} I/O calls, msec/call = {1e3 * secs / calls:.2f}, "
            f"calls/sec = {calls / secs:.2f}",
            file=out,
        )
    print(_limit_line(c), file=out)
    return 0


def _limit_line(c: dict) -> str:
    """What bound the transfer, after the tool's own report (a comment line)."""
    return f"# limited by {c['limited_by']}: {c['limit_evidence']}"


def _netperf_options(words: list[str]) -> dict[str, int]:
    words = [w for w in words if w != "--"]
    known = {"-s": "local_send", "-S": "remote_recv", "-m": "send_size", "-M": "recv_size"}
    out: dict[str, int] = {}
    i = 0
    while i < len(words):
        flag = words[i]
        if flag not in known:
            raise UsageError(f"netperf test option {flag!r}: expected one of {', '.join(known)}")
        if i + 1 >= len(words):
            raise UsageError(f"netperf test option {flag} needs a value in bytes")
        try:
            out[known[flag]] = byte_count(f"netperf test option {flag}")(words[i + 1])
        except argparse.ArgumentTypeError as e:
            raise UsageError(str(e)) from None
        i += 2
    return out


def netperf(args: argparse.Namespace) -> int:
    if args.test != "TCP_STREAM":
        raise UsageError(f"netperf test {args.test!r}: only TCP_STREAM is simulated")
    if not 0 < args.seconds <= 3600:
        raise UsageError(f"-l {args.seconds}: test length must be in (0, 3600] seconds")
    o = _netperf_options(args.options)
    sndbuf, rcvbuf = o.get("local_send", 52428), o.get("remote_recv", 52428)
    send_size = o.get("send_size", 8192)
    spec = _spec(
        args.testbed,
        args.seed,
        {
            "sndbuf": sndbuf,
            "rcvbuf": rcvbuf,
            "receiver_blocksize": o.get("recv_size", send_size),
            "traffic": {"type": "full", "blocksize": send_size, "duration_s": args.seconds},
        },
        args.remote,
    )
    c = _native.simulate(spec)["connections"][0]
    print(f"TCP STREAM TEST to {c['receiver']} (simulated: testbed {args.testbed})")
    print("Recv   Send    Send")
    print("Socket Socket  Message  Elapsed")
    print("Size   Size    Size     Time     Throughput")
    print("bytes  bytes   bytes    secs.    10^6bits/sec")
    print()
    mbps = c["throughput_bps"] / 1e6
    print(f"{rcvbuf:6d} {sndbuf:6d} {send_size:6d}    {c['sender_seconds']:5.2f}   {mbps:8.2f}")
    print()
    print(_limit_line(c))
    return 0
