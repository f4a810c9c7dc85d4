"""The real engine's traffic agents through the bindings, on loopback only."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the real engine is Linux-only")


def _native():
    from cellbench import _native

    return _native


def _free_port(kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pair(protocol: str, source: dict, sink_blocksize: int = 8192) -> tuple[dict, dict]:
    kind = socket.SOCK_STREAM if protocol == "tcp" else socket.SOCK_DGRAM
    port = _free_port(kind)
    now = time.time()
    sink_spec = {
        "protocol": protocol,
        "bind": f"127.0.0.1:{port}",
        "blocksize": sink_blocksize,
        "deadline_at": now + 10,
        "idle_timeout_s": 0.5,
    }
    got: dict = {}
    t = threading.Thread(target=lambda: got.update(_native().real_sink(sink_spec)))
    t.start()
    spec = {
        "protocol": protocol,
        "bind": "127.0.0.1",
        "peer": f"127.0.0.1:{port}",
        "start_at": now + 0.1,
        **source,
    }
    tx = _native().real_source(spec)
    t.join()
    return tx, got


def test_tcp_full_nbytes_delivered_and_tcp_info():
    tx, rx = _pair(
        "tcp",
        {"blocksize": 65536, "nbytes": 3_000_000, "sndbuf": 262144, "congestion": "reno"},
    )
    assert tx["bytes"] == rx["bytes"] == 3_000_000
    assert tx["congestion"] == "reno"
    info = tx["tcp_info"]
    assert info["unacked"] == 0 and info["snd_mss"] > 0
    assert tx["started_at"] >= time.time() - 5 and tx["ended_at"] >= tx["started_at"]
    # ttcp's throughput: the bytes over the sender's write span.
    assert tx["throughput_bps"] == pytest.approx(tx["bytes"] * 8 / tx["seconds"])


def test_constant_rate_within_two_percent():
    # 8 KB every 1 ms = 65.5 Mb/s offered, for 0.5 s: 500 blocks.
    tx, rx = _pair("tcp", {"blocksize": 8192, "period_us": 1000.0, "duration_s": 0.5})
    assert tx["blocks"] == 500
    assert rx["bytes"] == 500 * 8192
    offered = 8192 * 8 / 1e-3
    # ttcp's span covers 499 periods and the last write.
    assert tx["throughput_bps"] == pytest.approx(offered * 500 / 499, rel=0.02)
    # Late blocks (a busy machine preempts the pacer) are counted, and still sent.
    timing = tx["timing"]
    assert 0 <= timing["late_blocks"] < 250
    assert timing["error_p50_us"] <= timing["error_p99_us"] <= timing["error_max_us"]


def test_udp_stream_counts_datagrams():
    tx, rx = _pair("udp", {"blocksize": 1000, "period_us": 200.0, "nbytes": 100_000}, 1000)
    assert tx["bytes"] == 100_000 and tx["tcp_info"] is None
    assert rx["datagrams"] == 100 and rx["bytes"] == 100_000


def test_bad_spec_and_refused_connection():
    with pytest.raises(ValueError, match="unknown field"):
        _native().real_source({"protocol": "tcp", "peer": "127.0.0.1:1", "nosuch": 1})
    port = _free_port(socket.SOCK_STREAM)
    spec = {
        "protocol": "tcp",
        "peer": f"127.0.0.1:{port}",
        "blocksize": 100,
        "nbytes": 100,
        "start_at": time.time(),
        "connect_timeout_s": 0.05,
    }
    with pytest.raises(OSError, match=f"connect 127.0.0.1:{port}"):
        _native().real_source(spec)


def test_daemon_limits(monkeypatch):
    """What a daemon refuses, whoever asks: each limit by itself, and the same spec
    admitted once the daemon's owner raised that limit."""
    from cellbench.engines.real import agents

    base = {"protocol": "tcp", "blocksize": 1000, "peer": "127.0.0.1:5001"}
    cases = [
        ({"peer": "10.9.9.9:5001", "nbytes": 1000}, "allow", ["10.9.0.0/16"]),
        ({"peer": "[2001:db8::1]:5001", "nbytes": 1000}, "allow", ["2001:db8::/32"]),
        ({"duration_s": 400}, "max_duration_s", 500.0),
        ({"period_us": 0.5, "duration_s": 1}, "max_rate_bps", 20e9),  # 16 Gb/s paced
        ({"nbytes": 10**12}, "max_rate_bps", 100e9),  # 800 s even at 10 Gb/s
    ]
    for extra, limit, raised in cases:
        spec = base | extra
        assert agents.refusal(spec), spec
        with monkeypatch.context() as m:
            value = agents.LIMITS[limit] + raised if limit == "allow" else raised
            m.setitem(agents.LIMITS, limit, value)
            assert agents.refusal(spec) is None, (spec, agents.refusal(spec))
    assert json.loads(agents.admit([base | {"nbytes": 1}, base | {"duration_s": 1e4}]))[0] is None


PROCESS_LIMITS = r"""
import json, socket, threading, time
from cellbench import _native

_native.real_limits({"allow": ["127.0.0.0/8"], "max_duration_s": 2.0, "max_rate_bps": 80e6,
                     "realtime": False})
out = {}
try:
    _native.real_limits({"allow": ["0.0.0.0/0"], "max_duration_s": 2592000, "max_rate_bps": 1e12,
                         "realtime": True})
except ValueError as e:
    out["again"] = str(e)
try:
    _native.real_source({"protocol": "udp", "peer": "192.0.2.1:9", "blocksize": 100,
                         "nbytes": 100, "start_at": time.time()})
except OSError as e:
    out["outside"] = str(e)

def blast(nbytes, extra=None):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    now = time.time()
    sink = {"protocol": "tcp", "bind": f"127.0.0.1:{port}", "blocksize": 65536,
            "deadline_at": now + 600}
    t = threading.Thread(target=_native.real_sink, args=(sink,))
    t.start()
    spec = {"protocol": "tcp", "peer": f"127.0.0.1:{port}", "blocksize": 65536,
            "start_at": now + 0.1, "max_rate_bps": 1e12, **(extra or {"nbytes": nbytes})}
    r = _native.real_source(spec)
    t.join()
    return r

r = blast(1 << 20)
out["blast"] = [r["bytes"], r["throughput_bps"], r["cap_bps"]]
r = blast(0, {"duration_s": 100.0})
out["long"] = [r["seconds"], r["notes"]]
print(json.dumps(out))
"""


def test_the_agents_hold_their_process_limits():
    """Limits set once in the process hold for the native agent itself, whatever its
    spec says: not loosened by a second call, no destination outside the allow list,
    a 1 MB blast with the spec's own 1 Tb/s cap still under the process's 80 Mb/s, and
    a 100 s transfer ended at the 2 s --max-duration."""
    import json
    import subprocess

    r = subprocess.run(
        [sys.executable, "-c", PROCESS_LIMITS], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert "set already" in out["again"]
    assert "192.0.2.1 is not in the daemon's allow list" in out["outside"]
    nbytes, bps, cap = out["blast"]
    assert nbytes == 1 << 20 and cap == 80e6
    assert 0.5 * 80e6 < bps <= 80e6, bps
    seconds, notes = out["long"]
    assert 1.9 < seconds < 2.5 and notes == ["ended at the daemon's --max-duration"], out
