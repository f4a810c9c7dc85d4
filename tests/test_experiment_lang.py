# ruff: noqa: E501 - the table of exact error messages reads best one message a line
"""The experiment language: the published NetSpec example, every error kind with its
exact position, the model (pairing, buffers, timing), testbeds and sweeps. No simulation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cellbench import vocab
from cellbench.experiment import lang, model, sweep
from cellbench.experiment import testbed as tb
from cellbench.experiment.lang import ExperimentError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

#: Issue 5's published example, verbatim.
NETSPEC = """cluster {
test roadrunner {
type = full (blocksize=131072, duration=10);
protocol = tcp (window=1048576);
own = roadrunner.atm:45000;
peer = hopper.atm:45000;
}
test hopper {
type = sink (blocksize=131072, duration=10);
protocol = tcp (window=1048576);
own = hopper.atm:45000;
peer = roadrunner.atm:45000;
}
}
"""


def pair(
    i: int, tx: str = "full (blocksize=8K, nbytes=1M)", rx: str = "sink (blocksize=8K)"
) -> str:
    return (
        f"test t{i} {{ type = {tx}; own = a{i}.atm:{5000 + i}; peer = b{i}.atm:{5000 + i}; }}\n"
        f"test s{i} {{ type = {rx}; own = b{i}.atm:{5000 + i}; peer = a{i}.atm:{5000 + i}; }}\n"
    )


def build(text: str, **kw) -> model.Experiment:
    return model.build(lang.parse(text, "x.netspec"), **kw)


def error(text: str) -> str:
    with pytest.raises(ExperimentError) as e:
        doc = lang.parse(text, "x.netspec")
        sw = sweep.from_document(doc)
        for p in sw.points():
            # What the simulator refuses too, at the setting (as `cellbench run` checks).
            model.check_with_engine(model.build(sweep.apply(doc, p, sw.params)), seed=1)
    return str(e.value)


def test_published_example_parses_and_pairs():
    assert (EXAMPLES / "netspec-example.netspec").read_text() == NETSPEC
    exp = build(NETSPEC)
    assert len(exp.connections) == 1
    c = exp.connections[0]
    assert (c.name, c.transmitter, c.receiver) == ("roadrunner", "roadrunner.atm", "hopper.atm")
    assert c.traffic.to_spec() == {"type": "full", "blocksize": 131072, "duration_s": 10.0}
    assert c.receiver_blocksize == 131072
    # window=1048576 is more than SunOS 4.1.1 accepts: clamped, and said so.
    assert (c.sndbuf, c.rcvbuf) == (52428, 52428)
    assert exp.notes == [
        "x.netspec:4:12: SO_SNDBUF 1048576 exceeds 52428, the largest socket buffer sunos411 "
        "accepts: using 52428",
        "x.netspec:10:12: SO_RCVBUF 1048576 exceeds 52428, the largest socket buffer sunos411 "
        "accepts: using 52428",
    ]
    spec = exp.spec(seed=7, replication=3)
    assert [h["name"] for h in spec["hosts"]] == ["roadrunner.atm", "hopper.atm"]
    # A host and a switch the file leaves at the run spec's defaults send only the
    # host's name: the core's own defaults stand for the rest.
    assert spec["hosts"][0] == {"name": "roadrunner.atm"} and spec["switch"] == {}
    host = vocab.DEFAULTS["host"]
    assert host["profile"] == "sparc-ipc" and host["phy"] == "taxi100"
    assert (spec["seed"], spec["replication"], vocab.DEFAULTS["switch"]["buffer_cells"]) == (
        7,
        3,
        256,
    )


def test_netspec_site_example_unnamed_test_and_suffixes():
    exp = build(
        "cluster { test { type = full (blocksize=32K, duration=10); protocol = tcp (window=16K);"
        " own = hosta:42005; peer = hostb:42006; }\n"
        "test hostb { type = sink (blocksize=32768, duration=10); protocol = tcp (window=128K);"
        " own = hostb:42006; peer = hosta:42005; } }"
    )
    c = exp.connections[0]
    assert (c.name, c.traffic.blocksize, c.sndbuf, c.rcvbuf) == ("test@1", 32768, 16384, 52428)


def test_numbers_comments_strings():
    toks = lang.tokenize('x = 16K 1.5M 2G -3 1e3 10.0.0.1 "s" $v # comment\n', "f")
    kinds = [(t.kind, t.value) for t in toks]
    assert kinds == [
        ("name", "x"),
        ("punct", None),
        ("number", 16384),
        ("number", 1572864),
        ("number", 2 << 30),
        ("number", -3),
        ("number", 1000.0),
        ("name", "10.0.0.1"),
        ("string", "s"),
        ("var", "v"),
        ("eof", None),
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        # syntax
        (
            "cluster {\n  test a { type = full (nbytes=1) }\n}",
            "x.netspec:2:35: found '}', expected ';' after the value",
        ),
        (
            "cluster {\n  tset a { }\n}",
            "x.netspec:2:3: found 'tset', expected 'test', 'parallel', 'serial' or '}'",
        ),
        (
            "clusters { }",
            "x.netspec:1:1: found 'clusters', expected 'cluster', 'testbed', 'sweep', 'tester' or end of file",
        ),
        (
            "cluster {\n",
            "x.netspec:2:1: found end of file, expected 'test', 'parallel', 'serial' or '}'",
        ),
        (
            'sweep { x = "abc; }',
            "x.netspec:1:20: found end of line, expected '\"' closing the string",
        ),
        (
            "sweep { x = 1 @ 2; }",
            "x.netspec:1:15: found '@', expected a name, a number, a string or one of { } ( ) [ ] ; = , :",
        ),
        ("sweep { x = [1, 2 3]; }", "x.netspec:1:19: found number 3, expected ',' or ']'"),
        (
            "sweep { x = ; }",
            "x.netspec:1:13: found ';', expected a value (a number, a name, host:port, a call or a list)",
        ),
        (
            "cluster { test a { own = h:70000; } }",
            "x.netspec:1:28: found number 70000, expected a port number 0..65535 after ':'",
        ),
        ("testbed { host { } }", "x.netspec:1:16: found '{', expected a name after 'host'"),
        # schema
        (
            "cluster { test a { type = full (nbytes=1); colour = red; } }",
            "x.netspec:1:44: found key 'colour', expected a test key: type, protocol, own, peer, service",
        ),
        (
            "cluster {\n" + pair(0, tx="full (blocksize=8K, nbyte=1M)") + "}",
            "x.netspec:2:38: found key 'nbyte', expected a full() key: blocksize, duration, nbytes",
        ),
        (
            "cluster {\n" + pair(0, tx="full (blocksize=8K)") + "}",
            "x.netspec:2:18: found full(blocksize=8K), expected full() with duration= (s) or nbytes= (bytes)",
        ),
        (
            "cluster {\n" + pair(0, tx="blast (blocksize=8K)") + "}",
            "x.netspec:2:18: found blast(blocksize=8K), expected a traffic type: full, burst, burstq, ftp, rr or sink",
        ),
        (
            "cluster {\n" + pair(0, tx="full (blocksize=8.5, nbytes=1M)") + "}",
            "x.netspec:2:34: found 8.5, expected a whole number >= 0 and <= 4294967295 for blocksize (bytes)",
        ),
        (
            "cluster {\n"
            + pair(0).replace("type = full", "protocol = tcp (windw=1); type = full")
            + "}",
            "x.netspec:2:27: found key 'windw', expected a tcp() key: window, sndbuf, rcvbuf, nodelay, pacing, congestion, mss",
        ),
        (
            "cluster {\n" + pair(0).replace("type = full", "protocol = udp; type = full") + "}",
            "x.netspec:3:1: found tcp, expected udp as its transmitter t0",
        ),
        # distributions and NetSpec's application models
        (
            "cluster {\n"
            + pair(0, tx="burstq (blocksize=ftpItemSize(min=8), period=1000, duration=1)")
            + "}",
            "x.netspec:2:36: not implemented: NetSpec application model ftpItemSize(...) for blocksize "
            "(cellbench has uniform(min, max) and exponential(mean) so far)",
        ),
        (
            "cluster {\n"
            + pair(
                0,
                tx="burst (blocksize=8K, period=ftpSessionInterarrival(lambda=0.00001, min=1000), duration=1)",
            )
            + "}",
            "x.netspec:2:46: not implemented: NetSpec application model ftpSessionInterarrival(...) for period "
            "(cellbench has uniform(min, max) and exponential(mean) so far)",
        ),
        (
            "cluster {\n"
            + pair(0, tx="burst (blocksize=8K, period=1000, duration=uniform(1, 2))")
            + "}",
            "x.netspec:2:61: not implemented: a random duration (only blocksize and period)",
        ),
        (
            "cluster {\n"
            + pair(0, tx="burst (blocksize=uniform(8K, 1K), period=1000, duration=1)")
            + "}",
            "x.netspec:2:35: found uniform(8K, 1K), expected min <= max in uniform() for blocksize",
        ),
        (
            "cluster {\n" + pair(0, tx="burst (blocksize=8K, period=gauss(1), duration=1)") + "}",
            "x.netspec:2:46: found gauss(1), expected a number, uniform(min, max) or exponential(mean) for period",
        ),
        (
            "cluster {\n"
            + pair(0, tx="burstq (blocksize=8K, period=1000, duration=1, repeats=3)")
            + "}",
            "x.netspec:2:65: not implemented: burstq() parameter 'repeats'",
        ),
        # pairing and timing
        (
            "cluster {\n" + pair(0).splitlines()[0] + "\n}",
            "x.netspec:2:76: found no sink test with own = b0.atm:5000 and peer = a0.atm:5000, "
            "expected one for transmitter test t0",
        ),
        (
            "cluster {\n" + pair(0).splitlines()[1] + "\n}",
            "x.netspec:2:65: found no transmitter test with own = a0.atm:5000 and peer = b0.atm:5000, "
            "expected one for sink test s0",
        ),
        (
            "cluster {\n" + pair(0) + pair(1).replace("t1", "t0") + "}",
            "x.netspec:4:1: found test 't0' a second time, expected unique test names (first at "
            "x.netspec:2:1)",
        ),
        (
            # s0 waits for t1's connection, which t0 does not: it could start after t0.
            "cluster { serial {\n"
            + pair(0).splitlines()[0]
            + "\nparallel {\n"
            + pair(1)
            + "}\n"
            + pair(0).splitlines()[1]
            + "\n} }",
            "x.netspec:7:1: sink test s0 starts after its transmitter t0: put them in one "
            "parallel block",
        ),
        # testbeds
        (
            "testbed lab { }\ncluster {\n" + pair(0) + "}",
            "x.netspec:1:9: found testbed preset 'lab', expected one of europe-vp, hetero-lan, lan, lan-buffers, magic, wan-contention, wan-contention-aai, wan-mismatch, wan-window",
        ),
        (
            "testbed { mtux = 9180; } cluster { }",
            "x.netspec:1:11: found key 'mtux', expected a testbed key: mtu, encap, hosts, switch { }, host NAME { }",
        ),
        (
            "testbed { switch { policy = red; } } cluster { }",
            "x.netspec:1:29: found red, expected a drop policy: one of tail-drop, ppd, epd",
        ),
        (
            "testbed { host a { profile = vax; } } cluster { }",
            "x.netspec:1:30: found vax, expected a host profile: one of sparc-ipc, pentium-90, sparc-10, pentium-100, power-challenge, sparc-20, ultra-1, alpha-3000",
        ),
        (
            # Solaris 2.5 takes a 128 KB buffer but has no window scaling to advertise it.
            "testbed hetero-lan { }\ncluster {\n"
            "test s { type = full (nbytes=1M); protocol = tcp (window=128K); own = ultra1-a:1; peer = ultra1-b:1; }\n"
            "test r { type = sink; protocol = tcp (window=128K); own = ultra1-b:1; peer = ultra1-a:1; }\n"
            "}",
            "x.netspec:4:34: SO_RCVBUF 131072 is a window solaris25 cannot advertise: at most "
            "65535 (no RFC 1323 window scaling)",
        ),
        (
            "testbed wan-window { }\ncluster {\n" + pair(0) + "}",
            "x.netspec:3:56: host 'a0.atm' is not in testbed 'wan-window' (hosts: alpha-east, "
            "alpha-west; no defaults)",
        ),
        # sweeps
        (
            "cluster {\n" + pair(0, tx="full (blocksize=$bs, nbytes=1M)") + "}",
            "x.netspec:2:34: found $bs, expected a value for it from a sweep { bs = ...; } or --set bs=...",
        ),
        (
            "cluster {\n" + pair(0) + "}\nsweep { windw = [1, 2]; }",
            "x.netspec:5:9: found parameter 'windw', expected a variable of the file (none) or a path "
            "TEST.key[.arg] (tests: s0, t0), testbed.key, testbed.switch.key, testbed.defaults.key "
            "or testbed.host.NAME.key",
        ),
        (
            "sweep { x = range(10, 1, 1); }",
            "x.netspec:1:13: found range 10..1 step 1, expected a step that moves from start to stop",
        ),
        (
            "sweep { replications = 0; }",
            "x.netspec:1:24: found 0, expected a whole number >= 1 and <= 4294967295 for replications",
        ),
    ],
)
def test_errors_are_one_line_with_position(text, message):
    got = error(text)
    assert "\n" not in got
    assert got == message


def test_duplicate_key_and_unknown_host():
    assert error("cluster {\n" + pair(0).replace("own =", "own = x:1; own =", 1) + "}").startswith(
        "x.netspec:2:"
    )
    with pytest.raises(ExperimentError, match=r"x.netspec:1:\d+: host 'a0.atm' is not in testbed"):
        bed = tb.Testbed(name="custom", hosts={"b0.atm": tb.HostSpec("b0.atm")})
        build("cluster {" + pair(0) + "}", testbed=bed)


def test_more_than_100_connections():
    text = "cluster {\n" + "".join(pair(i) for i in range(150)) + "}"
    exp = build(text)
    assert len(exp.connections) == 150
    spec = exp.spec(1, 0)
    assert len(spec["connections"]) == 150 and len(spec["hosts"]) == 300


def test_serial_steps_wait_for_the_connections_of_the_step_before():
    exp = build((EXAMPLES / "serial-parallel.netspec").read_text())
    # One simulation: a step starts when the previous step's connections have ended.
    got = [(c.name, c.after) for c in exp.connections]
    assert got == [("a1", []), ("b1", []), ("a2", [0, 1]), ("a3", [2]), ("b3", [2])]
    spec = exp.spec(1, 3)
    assert spec["replication"] == 3 and len(spec["connections"]) == 5
    assert [c.get("after", []) for c in spec["connections"]] == [[], [], [0, 1], [2], [2]]
    # Anywhere, not only at the top, and after byte counts as after durations: the
    # pair t1 then t2 beside t0, and t3 once all three have ended.
    nested = (
        "cluster { serial { parallel {\n"
        + pair(0, tx="full (blocksize=8K, duration=1.5)")
        + "serial { parallel {\n"
        + pair(1)
        + "} parallel {\n"
        + pair(2, tx="burst (blocksize=8K, period=1000, duration=2)")
        + "} } } parallel {\n"
        + pair(3)
        + "} } }"
    )
    exp = build(nested)
    assert [(c.name, c.after) for c in exp.connections] == [
        ("t0", []),
        ("t1", []),
        ("t2", [1]),
        ("t3", [0, 2]),
    ]
    # A step holding only a sink (its transmitter comes later) delays nothing.
    sink_first = (
        "cluster { serial {\n"
        + pair(0).splitlines()[1]
        + "\nparallel {\n"
        + pair(1)
        + "}\n"
        + pair(0).splitlines()[0]
        + "\n} }"
    )
    exp = build(sink_first)
    assert [(c.name, c.after) for c in exp.connections] == [("t1", []), ("t0", [0])]


def test_testbed_block_and_presets():
    bed = tb.from_document(
        lang.parse(
            "testbed lan { mtu = 9180; encap = llc-snap;\n"
            "switch { buffer_cells = 512; policy = epd; epd_threshold_cells = 400; }\n"
            "defaults { profile = ultra-1; phy = oc3c; flavour = reno; }\n"
            "host fast.atm { profile = alpha-3000; distance_m = 600000; } }",
            "tb",
        )
    )
    assert (bed.mtu, bed.encap, bed.switch["policy"], bed.switch["buffer_cells"]) == (
        9180,
        "llc-snap",
        "epd",
        512,
    )
    fast, other = bed.host("fast.atm", None), bed.host("other.atm", None)
    assert (fast.profile, fast.phy, fast.distance_m) == ("alpha-3000", "oc3c", 600000.0)
    assert (other.name, other.profile, other.flavour) == ("other.atm", "ultra-1", "reno")
    assert set(tb.PRESETS) >= {"lan-buffers", "wan-window", "europe-vp", "hetero-lan"}
    # The WAN presets are written in the language: their hosts only, sites and trunks.
    vp = tb.preset("europe-vp")
    assert vp.defaults is None
    assert [(h.name, h.phy, h.site) for h in vp.hosts.values()] == [
        ("sparc10-a", "oc3c", "lan-a"),
        ("sparc10-b", "taxi100", "lan-b"),
    ]
    assert vp.trunks[1]["upc"] == {"t_us": 16.39, "tau_us": 101.0, "action": "discard"}
    with pytest.raises(ExperimentError, match="host 'A' is not in testbed 'europe-vp'"):
        vp.host("A", None)
    with pytest.raises(ExperimentError, match="neither a preset"):
        tb.load("/nonexistent/testbed.netspec")


def test_sweep_product_ranges_and_set():
    doc = lang.parse(
        "cluster {\n" + pair(0, tx="full (blocksize=$bs, nbytes=1M)") + "}\n"
        "sweep { bs = [4K, 8K]; t0.protocol.sndbuf = range(16K, 24K, 4K); replications = 3; seed = 9; }",
        "x",
    )
    sw = sweep.from_document(doc)
    assert (sw.replications, sw.seed) == (3, 9)
    pts = [{k: sweep.column_value(v) for k, v in p.items()} for p in sw.points()]
    assert pts == [
        {"bs": b, "t0.protocol.sndbuf": s} for b in (4096, 8192) for s in (16384, 20480, 24576)
    ]
    exps = [model.build(sweep.apply(doc, p, sw.params)) for p in sw.points()]
    assert [(e.connections[0].traffic.blocksize, e.connections[0].sndbuf) for e in exps][:4] == [
        (4096, 16384),
        (4096, 20480),
        (4096, 24576),
        (8192, 16384),
    ]
    # --set: a list, a range with the stop included, a single value, a call.
    assert [sweep.column_value(v) for v in sweep.parse_set("bs=1K,2K").values] == [1024, 2048]
    assert [sweep.column_value(v) for v in sweep.parse_set("bs=16K:48K:16K").values] == [
        16384,
        32768,
        49152,
    ]
    assert [sweep.column_value(v) for v in sweep.parse_set("x=0.5:1:0.25").values] == [
        0.5,
        0.75,
        1.0,
    ]
    one = sweep.parse_set("t0.type=full(blocksize=1K, nbytes=2M)").values
    assert len(one) == 1 and lang.render(one[0]) == "full(blocksize=1K, nbytes=2M)"
    merged = sweep.merge(sw, [sweep.parse_set("bs=2K"), sweep.parse_set("testbed.mtu=9180")])
    assert [(p.key, len(p.values)) for p in merged.params] == [
        ("bs", 1),
        ("t0.protocol.sndbuf", 3),
        ("testbed.mtu", 1),
    ]
    e = model.build(sweep.apply(doc, merged.points()[0], merged.params))
    assert (e.connections[0].traffic.blocksize, e.testbed.mtu, e.testbed.name) == (
        2048,
        9180,
        "lan-buffers",
    )
    with pytest.raises(ExperimentError) as err:
        sweep.parse_set("bs=1,,2")
    assert (
        str(err.value)
        == "--set:1:6: found ',', expected a value (a number, a name, host:port, a call or a list)"
    )


def test_text_is_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    text = f"cluster {{ test a {{ type = __import__('os').system('touch {marker}'); }} }}"
    with pytest.raises(ExperimentError):
        build(text)
    assert not marker.exists()


WAN_TESTBED = """
testbed {
    defaults { profile = alpha-3000; phy = oc3c; flavour = reno; }
    host w { site = west; }
    host e { site = east; }
    trunk { from = west; to = east; phy = ds3; delay_ms = 4.4; }
}
cluster {
    test tx { type = full (blocksize=64K, nbytes=1M); protocol = tcp (window=16K);
              own = w:5001; peer = e:5001; }
    test rx { type = sink (blocksize=64K); protocol = tcp (window=16K);
              own = e:5001; peer = w:5001; }
}
"""


def test_testbed_sites_and_trunks_reach_the_simulator():
    import cellbench

    exp = model.build(lang.parse(WAN_TESTBED, "wan.netspec"))
    spec = exp.spec(1, 0)
    assert [h["site"] for h in spec["hosts"]] == ["west", "east"]
    assert spec["trunks"] == [{"from": "west", "to": "east", "phy": "ds3", "delay_ms": 4.4}]
    df = cellbench.run(WAN_TESTBED).to_pandas()
    # 16 KB per 8.8 ms round trip at most: the WAN delay is in the path.
    assert 0 < df.throughput_bps.iloc[0] < 16384 * 8 / 0.0088


@pytest.mark.parametrize(
    "trunk, message",
    [
        ("trunk { from = a; to = b; colour = 1; }", "found key 'colour', expected a trunk key"),
        ("trunk { from = a; to = a; delay_ms = 1; }", "found trunk from a to itself"),
        ("trunk { from = a; delay_ms = 1; }", "expected a trunk with to = ..."),
        (
            "trunk { from = a; to = b; delay_ms = 1; upc_t_us = 16.39; }",
            "expected both upc_t_us and upc_tau_us for a UPC",
        ),
        (
            "trunk { from = a; to = b; delay_ms = 1; upc_t_us = 16.39; upc_tau_us = 101; "
            "upc_action = drop; }",
            "expected a UPC action",
        ),
    ],
)
def test_bad_trunks(trunk, message):
    text = "testbed { " + trunk + " }\ncluster { }\n"
    with pytest.raises(lang.ExperimentError, match=re.escape(message)):
        model.build(lang.parse(text, "x.netspec"))


POLICED_VP = """
testbed {
    defaults { profile = sparc-10; phy = oc3c; }
    host tx { site = lan-a; spacing_us = 19.45; stall = 0; }
    host rx { site = lan-b; phy = taxi100; }
    trunk { from = lan-a; to = public; phy = e3; delay_ms = 0.05; }
    trunk { from = public; to = lan-b; phy = e3; delay_ms = 3.95;
            upc_t_us = 16.39; upc_tau_us = 101; upc_action = tag; }
}
cluster {
    test t { type = full (blocksize=8K, nbytes=1M); protocol = tcp (window=48K, pacing=$pace);
             own = tx:5001; peer = rx:5001; }
    test r { type = sink (blocksize=8K); protocol = tcp (window=48K); own = rx:5001; peer = tx:5001; }
}
sweep { pace = [20, 30]; }
"""


def test_spacing_pacing_and_upc_are_data():
    import cellbench

    exp = model.build(lang.parse(POLICED_VP.replace("$pace", "20"), "vp.netspec"))
    spec = exp.spec(1, 0)
    assert spec["hosts"][0]["spacing_us"] == 19.45 and spec["hosts"][0]["stall"] is False
    assert spec["trunks"][1]["upc"] == {"t_us": 16.39, "tau_us": 101.0, "action": "tag"}
    assert spec["connections"][0]["pacing_mbps"] == 20.0
    df = cellbench.run(POLICED_VP).to_pandas().set_index("pace")
    # Paced below the VP's 23.42 Mb/s nothing is policed. Above it the UPC only
    # tags (CLP = 1) the excess: no cell is discarded, and the faster pace wins.
    for pace in (20.0, 30.0):
        assert df.loc[pace, "cells_policed"] == 0 and df.loc[pace, "cells_lost"] == 0
    assert df.loc[30.0, "throughput_bps"] > df.loc[20.0, "throughput_bps"] > 10e6


TAGGED_AND_CLEAN = """
testbed {
    defaults { profile = alpha-3000; phy = oc3c; }
    host a { site = west; }
    host b { site = east; }
    host r { site = east; phy = taxi100; }
    switch { clp1_threshold_cells = $clp1; }
    trunk { from = west; to = east; delay_ms = 0.1;
            upc_t_us = 21.2; upc_tau_us = 0; upc_action = tag; }
}
cluster {
    test ta { type = full (blocksize=8K, nbytes=4M); protocol = udp; own = a:5001; peer = r:5001; }
    test sa { type = sink (blocksize=8K); protocol = udp; own = r:5001; peer = a:5001; }
    test tb { type = full (blocksize=8K, nbytes=4M); protocol = udp (pacing=60);
              own = b:5002; peer = r:5002; }
    test sb { type = sink (blocksize=8K); protocol = udp; own = r:5002; peer = b:5002; }
}
"""


def test_clp1_threshold_spares_the_conforming_vc():
    import cellbench

    # a's UDP blast crosses a trunk whose UPC tags all but 20 Mb/s of it; b's
    # 60 Mb/s stays CLP = 0; both meet at r's 100 Mb/s TAXI port.
    exp = model.build(lang.parse(TAGGED_AND_CLEAN.replace("$clp1", "64"), "clp.netspec"))
    assert exp.spec(1, 0)["switch"]["clp1_threshold_cells"] == 64
    off = model.build(lang.parse(TAGGED_AND_CLEAN.replace("$clp1", "off"), "clp.netspec"))
    assert off.spec(1, 0)["switch"]["clp1_threshold_cells"] is None
    res = cellbench.run(TAGGED_AND_CLEAN, clp1=["off", 64])
    df = res.to_pandas().set_index(["clp1", "transmitter"])
    # Without the threshold the overflowing port takes cells from both.
    assert df.loc[("off", "a"), "cells_lost"] > 0 and df.loc[("off", "b"), "cells_lost"] > 0
    assert df.loc[("off", "a"), "cells_lost_clp"] == 0
    # With it only a's tagged cells go (cause clp); b loses nothing.
    assert df.loc[("64", "b"), "cells_lost"] == 0 and df.loc[("64", "b"), "data_pdus_lost"] == 0
    a = df.loc[("64", "a")]
    assert a["cells_tagged"] > 0 and a["cells_lost_clp"] == a["cells_lost"] > 0
    ports = res.ports()
    to_r = ports[(ports.host == "r")].set_index("run")
    assert to_r["cells_lost_clp"].tolist()[1] == to_r["cells_lost"].tolist()[1] > 0


@pytest.mark.parametrize(
    "switch, message",
    [
        (
            "switch { buffer_cells = 128; epd_threshold_cells = 64; clp1_threshold_cells = 200; }",
            "x.netspec:1:66: the simulator refuses it: switch clp1_threshold_cells 200: must be "
            "1 to buffer_cells (128) (against buffer_cells=128 at x.netspec:1:20)",
        ),
        (
            "switch { clp1_threshold_cells = 0; }",
            "x.netspec:1:20: the simulator refuses it: switch clp1_threshold_cells 0: must be "
            "1 to buffer_cells (256)",
        ),
        (
            "switch { clp1_threshold_cells = on; }",
            "x.netspec:1:43: found on, expected a CLP-1 threshold in cells (a whole number) or off",
        ),
    ],
)
def test_bad_clp1_thresholds(switch, message):
    tests = (
        "cluster { test a { type = full (nbytes=1K); own = A:1; peer = B:1; } "
        "test b { type = sink; own = B:1; peer = A:1; } }"
    )
    with pytest.raises(ExperimentError) as e:
        exp = model.build(lang.parse("testbed { " + switch + " } " + tests, "x.netspec"))
        model.check_with_engine(exp, 1)  # a threshold past the buffer: the core's check
    assert str(e.value) == message


@pytest.mark.parametrize(
    "tx, message",
    [
        (
            "rr (request=0, duration=1)",
            "the simulator refuses it: connection 0 (a0.atm -> "
            "b0.atm): request 0 bytes: must be 1 to 1048576 bytes",
        ),
        (
            "rr (response=2M, duration=1)",
            "the simulator refuses it: connection 0 (a0.atm -> "
            "b0.atm): response 2097152 bytes: must be 1 to 1048576 bytes",
        ),
        ("rr (request=64)", "found rr(request=64), expected rr() with duration= (s)"),
        ("rr (request=uniform(1, 9), duration=1)", "expected a number of bytes for request"),
        ("rr (nbytes=1M, duration=1)", "expected a rr() key: request, response, duration"),
    ],
)
def test_bad_request_response(tx: str, message: str) -> None:
    """netperf TCP_RR as traffic rr: each bad value at its file:line:col."""
    got = error(f"cluster {{ {pair(0, tx)} }}")
    assert re.match(r"x\.netspec:1:\d+: ", got) and message in got, got


def test_request_response_runs_over_tcp() -> None:
    text = pair(0, "rr (duration=1)").replace("own = ", "protocol = udp; own = ")
    got = error(f"cluster {{ {text} }}")
    assert got.startswith("x.netspec:1:56: the simulator refuses it: connection 0"), got
    assert 'traffic rr is TCP_RR: protocol "udp" must be tcp' in got, got


TWO_SENDERS = """
testbed wan-mismatch { hosts = [alpha1, alpha2, sparc10]; }
cluster {
    parallel {
        test a1 { type = full (blocksize=64K, duration=0.2); protocol = tcp (window=128K, pacing=$p);
                  own = alpha1:5001; peer = sparc10:5001; }
        test a2 { type = full (blocksize=64K, duration=0.2); protocol = tcp (window=128K, pacing=$p);
                  own = alpha2:5002; peer = sparc10:5002; }
        test s1 { type = sink (blocksize=64K); protocol = tcp (window=128K); own = sparc10:5001; peer = alpha1:5001; }
        test s2 { type = sink (blocksize=64K); protocol = tcp (window=128K); own = sparc10:5002; peer = alpha2:5002; }
    }
}
sweep { p = [off, 35]; }
"""


def test_testbed_hosts_orders_the_network_and_pacing_off_is_none():
    from cellbench.experiment.plan import make_plan

    plan = make_plan(TWO_SENDERS)
    unpaced, paced = plan.task(0).spec, plan.task(1).spec
    # As the tests name them the receiver would come second; hosts = [...] says the order.
    assert [h["name"] for h in unpaced["hosts"]] == ["alpha1", "alpha2", "sparc10"]
    assert [c.get("pacing_mbps") for c in unpaced["connections"]] == [None, None]
    assert [c["pacing_mbps"] for c in paced["connections"]] == [35.0, 35.0]
    plain = make_plan(TWO_SENDERS.replace("hosts = [alpha1, alpha2, sparc10];", ""))
    assert [h["name"] for h in plain.task(0).spec["hosts"]] == ["alpha1", "sparc10", "alpha2"]


@pytest.mark.parametrize(
    ("hosts", "message"),
    [
        ("[alpha1, nosuch]", "x.netspec:2:24: host 'nosuch' is not in testbed"),
        ("[alpha1, alpha1]", "a list of host names, each once"),
        ("[1, 2]", "a list of host names, each once"),
    ],
)
def test_bad_testbed_hosts(hosts, message):
    text = TWO_SENDERS.replace("[alpha1, alpha2, sparc10]", hosts)
    with pytest.raises(lang.ExperimentError, match=message):
        model.build(lang.parse(text.replace("$p", "off"), "x.netspec"))


def test_a_test_alone_runs_in_the_whole_network():
    from cellbench.engines.sim.api import run as run_experiment
    from cellbench.experiment.plan import make_plan

    together = make_plan(TWO_SENDERS, sets=["p=off"]).task(0).spec
    alone = make_plan(TWO_SENDERS, sets=["p=off"], alone="a2")
    spec = alone.task(0).spec
    assert spec["hosts"] == together["hosts"]
    assert spec["connections"] == together["connections"][1:]
    rows = run_experiment(TWO_SENDERS, set=["p=off"], alone="a2").to_pandas()
    assert rows.test.tolist() == ["a2"] and rows.connection.tolist() == [1]
    assert alone.meta()["alone"] == "a2" and alone.meta()["connections_per_run"] == 1
    with pytest.raises(lang.ExperimentError, match="expected a transmitting test"):
        make_plan(TWO_SENDERS, sets=["p=off"], alone="s1")


def test_a_byte_count_off_leaves_the_length_to_a_duration():
    from cellbench.experiment.plan import make_plan
    from cellbench.reproduce import study

    file = study.experiment_file("lan-buffers")
    timed = make_plan(file, sets=["nbytes=off", "sender.type.duration=2", "snd=16K",
                                         "rcv=16K"], replications=1)  # fmt: skip
    t = timed.experiments[0].connections[0].traffic
    assert (t.nbytes, t.duration_s) == (None, 2.0)
    with pytest.raises(lang.ExperimentError, match=r"full\(\) with duration= .s. or nbytes="):
        make_plan(file, sets=["nbytes=off", "snd=16K", "rcv=16K"], replications=1)
