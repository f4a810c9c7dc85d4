"""The classic tools as front ends: ``cellbench ttcp`` and ``cellbench netperf``.

Both are thin: they write one run as an experiment (two hosts of a testbed preset,
or two real hosts, and one connection), run it through the run loop on ``--engine``
(``engines.loop.run_task``) and print what the real tool would have printed from
the engine's report of it (``Engine.connection_report``), in its own units: ttcp's
KB = 1024 bytes and Mbit = 2^20 bits; netperf's throughput in 10^6 bits/s. A last
comment line says what bound the transfer.
"""

from __future__ import annotations

import argparse
import sys
from decimal import Decimal

from cellbench.cli.common import UsageError, positive_int, seed
from cellbench.engines import table as engine_table
from cellbench.experiment.lang import ExperimentError
from cellbench.experiment.model import (
    DEFAULT_SOCKBUF,
    MAX_BLOCK,
    TIME_LIMIT_S,
    clamp_sockbuf,
)
from cellbench.experiment.testbed import preset
from cellbench.units import byte_count

# ttcp -f: format letter -> (divisor of bytes/s, unit label). Lower case: bits.
TTCP_FORMATS = {
    "k": (1024 / 8, "Kbit"),
    "K": (1024, "KB"),
    "m": (1024 * 1024 / 8, "Mbit"),
    "M": (1024 * 1024, "MB"),
    "g": (1024**3 / 8, "Gbit"),
    "G": (1024**3, "GB"),
}


# netperf -f: format letter -> (divisor of bytes/s, the unit its table heads with).
# netperf's k, m, g are decimal bits; K, M, G binary bytes (netlib.c calc_thruput).
NETPERF_FORMATS = {
    "k": (1e3 / 8, "10^3bits"),
    "m": (1e6 / 8, "10^6bits"),
    "g": (1e9 / 8, "10^9bits"),
    "K": (1024, "KBytes"),
    "M": (1024**2, "MBytes"),
    "G": (1024**3, "GBytes"),
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
    t.add_argument(
        "host", nargs="?", help="-t: the receiving host of the testbed (default: its receiver)"
    )
    _common(t)
    t.set_defaults(func=ttcp)

    n = sub.add_parser(
        "netperf",
        help="netperf TCP_STREAM, UDP_STREAM or TCP_RR against a simulated testbed "
        "(netperf's table)",
        description="netperf -t TCP_STREAM|UDP_STREAM -l SECONDS -- -s LOCAL_SNDBUF "
        "-S REMOTE_RCVBUF -m SEND_SIZE -M RECV_SIZE; netperf -t TCP_RR -l SECONDS -- "
        "-r REQUEST,RESPONSE (1,1) -s LOCAL_BUFFERS -S REMOTE_BUFFERS -D (TCP_NODELAY), "
        "run on the simulator.",
    )
    n.add_argument(
        "-t",
        dest="test",
        default="TCP_STREAM",
        help="test name: TCP_STREAM (default), UDP_STREAM, TCP_RR",
    )
    n.add_argument(
        "-f",
        dest="fmt",
        choices=sorted(NETPERF_FORMATS),
        default="m",
        help="units: k, m, g = 10^3, 10^6, 10^9 bits/s; K, M, G = 2^10, 2^20, 2^30 bytes/s (m)",
    )
    n.add_argument("-l", dest="seconds", type=float, default=10.0, help="test length, s (10)")
    n.add_argument(
        "-H", dest="remote", help="remote host (default: the testbed's receiver, B on a LAN)"
    )
    n.add_argument(
        "options", nargs=argparse.REMAINDER, help="-- -s N -S N -m N -M N (TCP_RR: -r N,N -s -S -D)"
    )
    _common(n)
    n.set_defaults(func=netperf)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--testbed", default="lan-buffers", help="testbed preset (lan-buffers)")
    p.add_argument("--seed", type=seed(), default=1, help="seed (1)")
    p.add_argument(
        "--engine",
        choices=engine_table.TOOL_NAMES,
        default=engine_table.DEFAULT,
        help=engine_table.help_text(engine_table.TOOL_NAMES),
    )
    for option in engine_table.tool_options():
        p.add_argument(*option.flags, **option.argparse)


def _preset_pair(
    testbed: str,
    connection: dict,
    remote: str | None = None,
    flags: tuple[str, str] = ("SO_SNDBUF", "SO_RCVBUF"),
) -> tuple[str, str]:
    """The transmitter and receiver of one transfer on a preset: its transmitter, and
    `remote` (default its receiver). A socket buffer beyond what the host's TCP flavour
    accepts is clamped with the note `run` gives; `flags` name the options that set
    them."""
    try:
        tb = preset(testbed)
        local, peer = tb.pair[0], remote or tb.pair[1]
        bed = tb.to_dict([local, peer])
        hosts = {h["name"]: h for h in bed["hosts"]}
    except ExperimentError as e:
        raise UsageError(str(e)) from None
    if peer == local:
        raise UsageError(
            f"host {peer} is the transmitter: name the receiving host (e.g. {tb.pair[1]})"
        )
    notes: list[str] = []
    for key, host, flag, what in (
        ("sndbuf", local, flags[0], "SO_SNDBUF"),
        ("rcvbuf", peer, flags[1], "SO_RCVBUF"),
    ):
        if connection.get(key):
            connection[key] = clamp_sockbuf(
                connection[key], hosts[host]["flavour"], what, flag, notes
            )
    for note in notes:
        print(f"cellbench: note: {note}", file=sys.stderr)
    return local, peer


def _number(x: float) -> str:
    """A number as the experiment language reads it back exactly (no exponent)."""
    return format(Decimal(repr(x)), "f")


def _experiment(testbed: str, tx: str, rx: str, c: dict, port: int) -> str:
    """One connection (``c``, the simulator's connection keys) from ``tx`` to ``rx`` as
    an experiment file on ``testbed`` (a testbed block): the source, and the sink or
    responder."""
    t = c["traffic"]
    if t["type"] == "rr":
        kind = f"rr (request={t['request']}, response={t['response']}, "
        sink = "sink"
    else:
        kind = f"full (blocksize={t['blocksize']}, "
        sink = f"sink (blocksize={c.get('receiver_blocksize', t['blocksize'])})"
    amount = f"nbytes={t['nbytes']}" if "nbytes" in t else f"duration={_number(t['duration_s'])}"
    send = [f"sndbuf={c['sndbuf']}"] if c.get("sndbuf") else []
    if c.get("nodelay"):
        send.append("nodelay=true")
    recv = [f"rcvbuf={c['rcvbuf']}"] if c.get("rcvbuf") else []
    proto = c.get("protocol", "tcp")
    return (
        f"{testbed}\ncluster {{\n"
        f"test t {{ type = {kind}{amount}); protocol = {proto} ({', '.join(send)}); "
        f"own = {tx}:{port}; peer = {rx}:{port}; }}\n"
        f"test r {{ type = {sink}; protocol = {proto} ({', '.join(recv)}); "
        f"own = {rx}:{port}; peer = {tx}:{port}; }}\n"
        "}\n"
    )


def _transfer(
    args: argparse.Namespace,
    connection: dict,
    remote: str | None,
    flags: tuple[str, str],
) -> dict:
    """Run ``connection`` (the simulator's connection keys) through the run loop on
    --engine: on a simulated one from the --testbed preset's
    transmitter to ``remote`` (its socket buffers clamped, ``_preset_pair``), on real
    hosts from the first --host to the other; the engine's report of it in the
    simulator's connection keys."""
    from cellbench.engines import loop
    from cellbench.experiment.plan import make_plan

    name = args.engine
    kind = engine_table.get(name)
    if kind.simulated:
        tx, rx = _preset_pair(args.testbed, connection, remote, flags)
        testbed = f"testbed {args.testbed} {{ }}"
    else:
        tx, rx, testbed = kind.tool_hosts(args, remote)
    port = args.p if getattr(args, "p", None) else 5001
    text = _experiment(testbed, tx, rx, connection, port)
    plan = make_plan(text, seed=args.seed, file=f"<{args.command} --engine {name}>")
    run = kind.from_options(args)
    return run.connection_report(plan, loop.run_task(plan, run))


def _fmt(rate_bytes: float, letter: str) -> str:
    div, unit = TTCP_FORMATS[letter]
    return f"{rate_bytes / div:.2f} {unit}"


def _rusage(user_s: float, sys_s: float, real_s: float) -> str:
    """ttcp's prusage() line in its System V form, "%Uuser %Ssys %Ereal %P": user
    and system seconds truncated to tenths, real time as m:ss (h:mm:ss past an
    hour), CPU share as a whole percent of centiseconds over centiseconds. (The
    BSD form adds memory, page-fault and context-switch counts, which the
    simulator does not model.)"""

    def tenths(x: float) -> str:
        return f"{int(x)}.{int(x * 10) % 10}"

    cpu_cs = int(user_s * 100) + int(sys_s * 100)
    real_cs = int(real_s * 100)
    secs = real_cs // 100
    if secs >= 3600:
        elapsed = f"{secs // 3600}:{secs % 3600 // 60:02d}:{secs % 60:02d}"
    else:
        elapsed = f"{secs // 60}:{secs % 60:02d}"
    return (
        f"{tenths(user_s)}user {tenths(sys_s)}sys {elapsed}real {cpu_cs * 100 // (real_cs or 1)}%"
    )


def ttcp(args: argparse.Namespace) -> int:
    receiver = args.r
    if receiver and args.host:
        raise UsageError(f"ttcp -r takes no host (the receiver listens): {args.host!r}")
    nbytes = args.l * args.n
    # Only the buffers ttcp was given (-b sizes its own end's): the simulator's default
    # stands for the others (the largest SunOS buffer), a real kernel keeps its own.
    connection = {
        "protocol": "udp" if args.u else "tcp",
        "sndbuf": args.sndbuf or (None if receiver else args.b),
        "rcvbuf": args.rcvbuf or (args.b if receiver else None),
        "nodelay": args.D,
        "traffic": {"type": "full", "blocksize": args.l, "nbytes": nbytes},
    }
    flags = (
        "ttcp --sndbuf" if args.sndbuf else "ttcp -b",
        "ttcp --rcvbuf" if args.rcvbuf else "ttcp -b",
    )
    c = _transfer(args, connection, args.host, flags)
    tag = "ttcp-r" if receiver else "ttcp-t"
    proto = "udp" if args.u else "tcp"
    out = sys.stdout
    # The header as ttcp prints it; sockbufsize only when -b set one.
    head = f"{tag}: buflen={args.l}, nbuf={args.n}, align=16384/0, port={args.p}"
    if args.b:
        head += f", sockbufsize={args.b}"
    print(head + f"  {proto}" + ("" if receiver else f"  -> {c['receiver']}"), file=out)
    print(f"{tag}: socket", file=out)
    if args.b:
        print(f"{tag}: {'rcvbuf' if receiver else 'sndbuf'}", file=out)
    if not args.u:
        # TCP only: UDP neither connects nor accepts.
        if receiver:
            print(f"{tag}: accept from {c['transmitter']}", file=out)
        else:
            if args.D:
                print(f"{tag}: nodelay", file=out)
            print(f"{tag}: connect", file=out)
    if receiver:
        nbytes_seen, secs, calls = c["bytes_received"], c["receiver_seconds"], c["reads"]
        busy = c["receiver_cpu_busy"]
    else:
        nbytes_seen, secs, calls = c["bytes"], c["sender_seconds"], c["writes"]
        busy = c["sender_cpu_busy"]
    if not c["completed"]:
        limit = engine_table.get(args.engine).time_limit
        print(f"{tag}: transfer did not complete within {limit}", file=sys.stderr)
        return 1
    # ttcp's floor for the interval, so a tiny transfer divides by something.
    realt = secs if secs > 0 else 0.001
    print(
        f"{tag}: {nbytes_seen} bytes in {realt:.2f} real seconds = "
        f"{_fmt(nbytes_seen / realt, args.f)}/sec +++",
        file=out,
    )
    if calls:
        # ttcp's "msec/call" is 1024 x seconds / calls, as its source computes it. (Over
        # UDP real ttcp also counts its few 4-byte start/end sentinel datagrams; the
        # simulated transfer has none, so its calls are the data writes or reads.)
        print(
            f"{tag}: {calls} I/O calls, msec/call = {1024.0 * realt / calls:.2f}, "
            f"calls/sec = {calls / realt:.2f}",
            file=out,
        )
    if busy is not None:
        # All the work the simulator charges a host is kernel work (system calls,
        # copies, protocol, driver), so it is system time; ttcp's own user-level
        # work (a loop of write or read calls) is not modelled: user 0.0.
        print(f"{tag}: {_rusage(0.0, busy * realt, realt)}", file=out)
    if args.u and not receiver:
        # ttcp -t counts what it wrote; over UDP what arrived is ttcp -r's figure.
        got, rs = c["bytes_received"], c["receiver_seconds"] or 0.001
        print(
            f"# received by {c['receiver']}: {got} bytes in {rs:.2f} real seconds = "
            f"{_fmt(got / rs, args.f)}/sec ({c['datagrams_received']} of "
            f"{c['datagrams_sent']} datagrams)",
            file=out,
        )
    print(_limit_line(c), file=out)
    return 0


def _buffers(connection: dict) -> tuple[int, int]:
    """The simulated connection's socket buffers as netperf prints them: those -s and
    -S gave (clamped to the flavour's largest), else the simulator's default."""
    return connection["sndbuf"] or DEFAULT_SOCKBUF, connection["rcvbuf"] or DEFAULT_SOCKBUF


def _limit_line(c: dict) -> str:
    """What bound the transfer, after the tool's own report (a comment line)."""
    return f"# limited by {c['limited_by']}: {c['limit_evidence']}"


#: netperf's test-specific options (after --) that take a size, per kind of test.
STREAM_OPTIONS = {"-s": "local_send", "-S": "remote_recv", "-m": "send_size", "-M": "recv_size"}
# TCP_RR: -s and -S size both of an end's socket buffers (nettest_bsd.c: lss_size and
# lsr_size, rss_size and rsr_size); -r the request and response, -D TCP_NODELAY at both ends.
RR_OPTIONS = {"-s": "local_send", "-S": "remote_recv", "-r": "sizes", "-D": "nodelay"}


def _netperf_options(words: list[str], known: dict[str, str]) -> dict:
    words = [w for w in words if w != "--"]
    out: dict = {}
    i = 0
    while i < len(words):
        flag = words[i]
        if flag not in known:
            raise UsageError(f"netperf test option {flag!r}: expected one of {', '.join(known)}")
        if flag == "-D":
            out["nodelay"] = True
            i += 1
            continue
        if i + 1 >= len(words):
            raise UsageError(f"netperf test option {flag} needs a value in bytes")
        try:
            if flag == "-r":
                out["sizes"] = _rr_sizes(words[i + 1])
            else:
                out[known[flag]] = byte_count(f"netperf test option {flag}")(words[i + 1])
        except argparse.ArgumentTypeError as e:
            raise UsageError(str(e)) from None
        i += 2
    return out


def _rr_sizes(text: str) -> tuple[int, int]:
    """netperf -r req,resp: "-r 32" sizes both, "-r ,1024" only the response (netperf's
    break_args: a value without a comma stands for both; an empty one keeps the default 1)."""
    parts = text.split(",")
    if len(parts) > 2:
        raise argparse.ArgumentTypeError(
            f"netperf test option -r: expected REQUEST,RESPONSE (bytes), got {text!r}"
        )
    if len(parts) == 1:
        parts = parts * 2
    size = byte_count("netperf test option -r", MAX_BLOCK)
    return tuple(size(p) if p.strip() else 1 for p in parts)  # type: ignore[return-value]


#: netperf's tests that the simulator runs, and the title netperf prints for each.
NETPERF_TESTS = {
    "TCP_STREAM": "TCP STREAM TEST",
    "UDP_STREAM": "UDP UNIDIRECTIONAL SEND TEST",
    "TCP_RR": "TCP REQUEST/RESPONSE TEST",
}


def netperf(args: argparse.Namespace) -> int:
    if args.test not in NETPERF_TESTS:
        raise UsageError(
            f"netperf test {args.test!r}: the simulator runs {', '.join(NETPERF_TESTS)}"
        )
    # A test runs within one simulation's time limit.
    if not 0 < args.seconds <= TIME_LIMIT_S:
        raise UsageError(f"-l {args.seconds}: test length must be in (0, {TIME_LIMIT_S:g}] seconds")
    if args.test == "TCP_RR":
        return _netperf_rr(args)
    o = _netperf_options(args.options, STREAM_OPTIONS)
    udp = args.test == "UDP_STREAM"
    send_size = o.get("send_size", 8192)
    # Only the buffers -s and -S give: the simulator's default stands for the others,
    # a real kernel keeps its own (netperf prints what getsockopt returns).
    connection = {
        "protocol": "udp" if udp else "tcp",
        "sndbuf": o.get("local_send"),
        "rcvbuf": o.get("remote_recv"),
        "receiver_blocksize": o.get("recv_size", send_size),
        "traffic": {"type": "full", "blocksize": send_size, "duration_s": args.seconds},
    }
    c = _transfer(args, connection, args.remote, ("netperf -s", "netperf -S"))
    if engine_table.simulated(args.engine):
        sndbuf, rcvbuf = _buffers(connection)
        where = f"simulated: testbed {args.testbed}"
    else:
        sndbuf, rcvbuf = c["sndbuf_granted"] or 0, c["rcvbuf_granted"] or 0
        where = "real: " + ", ".join(args.hosts)
    # netperf's elapsed time runs from the start of the test until its timer ends
    # it: a sender blocked for good (a window that never opens, a transfer the
    # simulated-time limit cut) still ends at -l, when netperf's alarm fires.
    elapsed = max(c["sender_seconds"], args.seconds) if c["completed"] else args.seconds
    div, unit = NETPERF_FORMATS[args.fmt]
    print(f"{NETPERF_TESTS[args.test]} to {c['receiver']} ({where})")
    if udp:
        # nettest_bsd.c send_udp_stream: the title, then a row for the sending
        # socket (messages sent, failed sends) and one for the receiving socket.
        # A datagram the adapter could not queue counts as a failed send (ENOBUFS).
        failed = c["pdus_dropped_at_adapter"]
        okay = c["datagrams_sent"] - failed
        recvd = c["datagrams_received"]
        print("Socket  Message  Elapsed      Messages                ")
        print("Size    Size     Time         Okay Errors   Throughput")
        print(f"bytes   bytes    secs            #      #   {unit}/sec")
        print()
        local = okay * send_size / elapsed / div
        remote = recvd * send_size / elapsed / div
        print(
            f"{sndbuf:6d}  {send_size:6d}   {elapsed:<7.2f}   {okay:7d} {failed:6d}    {local:7.2f}"
        )
        print(f"{rcvbuf:6d}           {elapsed:<7.2f}   {recvd:7d}           {remote:7.2f}")
        print()
    else:
        # nettest_bsd.c send_tcp_stream: title and one row "%6d %6d %6d    %-6.2f   %7.2f";
        # the throughput counts the bytes the remote end received, as netperf's does.
        print("Recv   Send    Send                          ")
        print("Socket Socket  Message  Elapsed              ")
        print("Size   Size    Size     Time     Throughput  ")
        print(f"bytes  bytes   bytes    secs.    {unit}/sec  ")
        print()
        rate = c["bytes_received"] / elapsed / div
        print(f"{rcvbuf:6d} {sndbuf:6d} {send_size:6d}    {elapsed:<6.2f}   {rate:7.2f}   ")
        print()
    print(_limit_line(c))
    return 0


def _netperf_rr(args: argparse.Namespace) -> int:
    """TCP_RR: request/response transactions on one connection for -l seconds; the
    transaction rate is the transactions completed over the test's length."""
    # Refused before anything runs where the engine cannot send request/response
    # traffic (a test of type rr), rather than run on another engine in its place.
    why = engine_table.get(args.engine).traffic_not_yet.get("rr")
    if why is not None:
        tools = [engine_table.get(n) for n in engine_table.TOOL_NAMES]
        can = " or ".join(e.name for e in tools if "rr" not in e.traffic_not_yet)
        raise UsageError(
            f"netperf -t TCP_RR --engine {args.engine}: {why}; TCP_RR runs on --engine {can}"
        )
    o = _netperf_options(args.options, RR_OPTIONS)
    request, response = o.get("sizes", (1, 1))
    conn = {
        "sndbuf": o.get("local_send"),
        "rcvbuf": o.get("remote_recv"),
        "nodelay": o.get("nodelay", False),
        "traffic": {
            "type": "rr",
            "request": request,
            "response": response,
            "duration_s": args.seconds,
        },
    }
    c = _transfer(args, conn, args.remote, ("netperf -s", "netperf -S"))
    local, remote = _buffers(conn)
    # As for a stream: netperf's alarm ends the test at -l whatever the connection does.
    elapsed = c["sender_seconds"] if c["completed"] and c["sender_seconds"] > 0 else args.seconds
    rate = c["transactions"] / elapsed
    # (Simulated: the engines that run rr traffic today, the refusal above. One on real
    # hosts would print the granted buffers, as TCP_STREAM does.)
    # nettest_bsd.c send_tcp_rr: the title, tput_title, then tput_fmt_1_line_1 with the
    # local socket's send and receive buffers, the sizes, elapsed time and transaction
    # rate, and tput_fmt_1_line_2 with the remote socket's.
    print(f"{NETPERF_TESTS[args.test]} to {c['receiver']} (simulated: testbed {args.testbed})")
    print("Local /Remote")
    print("Socket Size   Request  Resp.   Elapsed  Trans.")
    print("Send   Recv   Size     Size    Time     Rate         ")
    print("bytes  Bytes  bytes    bytes   secs.    per sec   ")
    print()
    sizes = f"{local:<6d} {local:<6d} {request:<6d}   {response:<6d}"
    print(f"{sizes}  {elapsed:<6.2f}   {rate:7.2f}   ")
    print(f"{remote:<6d} {remote:<6d}")
    print()
    print(_limit_line(c))
    return 0
