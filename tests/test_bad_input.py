"""Bad input is named before anything runs: file:line:col, what was expected, exit 2,
nothing written; and the engine's own limits are stated where the value is written."""

from __future__ import annotations

import re
import tracemalloc
from pathlib import Path

import pytest

from cellbench.cli import main
from cellbench.experiment import lang, results
from cellbench.experiment.plan import make_plan

PAIR = """cluster {
  test s { type = TYPE; protocol = PROTO; own = A:5001; peer = PEER; }
  test r { type = sink (blocksize=8K); protocol = RPROTO; own = B:5002; peer = A:5001; }
}
"""


def experiment(
    type_: str = "full (blocksize=8K, nbytes=1M)",
    proto: str = "tcp (window=32K)",
    peer: str = "B:5002",
    rproto: str = "tcp (window=32K)",
) -> str:
    return (
        PAIR.replace("RPROTO", rproto)
        .replace("TYPE", type_)
        .replace("PROTO", proto)
        .replace("PEER", peer)
    )


def cli(capsys, *args: str) -> tuple[int, str]:
    """The command in this process: (exit status, stderr)."""
    try:
        code = main(list(args))
    except SystemExit as e:
        code = int(e.code or 0)
    return code, capsys.readouterr().err


def one_line_error(err: str) -> str:
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err.strip()


# --- the experiment file -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["parallel", "serial"])
def test_deep_nesting_is_one_line_error_not_recursion_error(capsys, tmp_path, kind) -> None:
    f = tmp_path / "deep.netspec"
    f.write_text("cluster {" + f"{kind} {{" * 200 + "}" * 200 + "}\n")
    code, err = cli(capsys, "run", str(f), "--check")
    assert code == 2
    assert f"deep.netspec:1:{len('cluster {') + 63 * len(kind + ' {') + 1}:" in one_line_error(err)
    assert f"at most {lang.MAX_DEPTH} levels of nesting" in err


@pytest.mark.parametrize("value", ["[" * 300 + "]" * 300, "f(" * 300 + ")" * 300])
def test_deeply_nested_values_are_one_line_errors(value: str) -> None:
    with pytest.raises(lang.ExperimentError, match="levels of nesting"):
        make_plan(experiment() + f"sweep {{ x = {value}; }}")


def test_nesting_short_of_the_limit_still_runs_its_tests() -> None:
    body = experiment().split("{", 1)[1].rsplit("}", 1)[0]
    deep = "cluster {" + "parallel {" * 60 + body + "}" * 60 + "}"
    plan = make_plan(deep)
    assert [c.name for c in plan.experiments[0].connections] == ["s"]


@pytest.mark.parametrize(
    "data, where",
    [
        (b"cluster {\n  # caf\xe9\n}\n", "2:8"),  # latin-1
        (b"\x89PNG\r\n\x1a\n\x00\x00", "1:1"),  # binary
    ],
)
def test_a_file_that_is_not_utf8_is_named_with_its_line(capsys, tmp_path, data, where) -> None:
    f = tmp_path / "bad.netspec"
    f.write_bytes(data)
    good = tmp_path / "good.netspec"
    good.write_text(experiment())
    for args in (["run", str(f), "--check"], ["run", str(good), "--testbed", str(f), "--check"]):
        code, err = cli(capsys, *args)
        assert code == 2
        assert f"bad.netspec:{where}: found byte 0x" in one_line_error(err), args


def test_a_huge_file_is_refused_at_once(tmp_path) -> None:
    f = tmp_path / "big.netspec"
    keys = "".join(f"  k{i} = [1, 2];\n" for i in range(80_000))
    f.write_text(experiment() + "sweep {\n" + keys + "}\n")
    # Refused before parsing: the memory peak stays far below what 80,000 keys would take
    # (memory, not time: a timed assertion fails on a loaded machine).
    tracemalloc.start()
    with pytest.raises(lang.ExperimentError, match=f"more than {lang.MAX_TEXT_BYTES} bytes"):
        make_plan(f)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * 2**20


@pytest.mark.parametrize(
    "sets, text, message",
    [
        (["snd=16K:48K"], "", "--set:1:5: found range 16384..49152 without a step: 32769 values"),
        ([], "sweep { w = range(1, 2000); }", "<text>:5:13: found range 1..2000 without a step"),
    ],
)
def test_a_long_range_without_a_step_is_refused(sets, text, message) -> None:
    """``snd=16K:48K`` meant a step of 1 byte: 32,769 points, 93 s, then 52 s to show."""
    with pytest.raises(lang.ExperimentError) as e:
        make_plan(experiment() + text, sets=sets)
    assert str(e.value).startswith(message)
    assert "expected a step (start:stop:step, range(start, stop, step))" in str(e.value)
    # A short one still steps by 1; a written step as before.
    plan = make_plan(experiment(proto="tcp (window=$w)"), sets=["w=16K:48K:4K"])
    assert len(plan.points) == 9
    assert len(make_plan(experiment(proto="tcp (window=$w)"), sets=["w=16K:16388"]).points) == 5


def test_check_says_each_note_once_with_a_count(capsys) -> None:
    """A note per point (100,000 points printed 47,572 note lines): now each once."""
    window = str(LAN.with_name("window.netspec"))
    code, err = cli(capsys, "run", window, "--set", "w=52429:53428:1", "--check")
    assert code == 0
    notes = [line for line in err.splitlines() if line.startswith("cellbench: note: ")]
    assert len(notes) == 2, err[:2000]  # SO_SNDBUF and SO_RCVBUF
    assert notes[1].endswith(
        ":9:20: SO_SNDBUF 52429 exceeds 52428, the largest socket buffer sunos411 accepts: "
        "using 52428 (and 999 more point(s) of the sweep alike)"
    )


def test_the_sweep_guard_is_on_the_product_and_builds_nothing() -> None:
    # Builds nothing: the two value lists take about 36 MB; 10^10 points would take
    # terabytes (memory, not time: a timed assertion fails on a loaded machine).
    tracemalloc.start()
    with pytest.raises(lang.ExperimentError) as e:
        make_plan(experiment(), sets=["a=1:100000:1", "b=1:100000:1"])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200 * 2**20
    assert "--set:1:3: found a sweep of more than 100000 points (a: 100000 x b: 100000" in str(
        e.value
    )
    # Many small parameters: the product, not any one range, passes the bound.
    keys = "".join(f"  k{i} = [1, 2];\n" for i in range(40))
    with pytest.raises(lang.ExperimentError, match="k16: 2 values|x ... values"):
        make_plan(experiment() + "sweep {\n" + keys + "}\n")


# --- values the engine refuses: refused first, at their position, with the real limit -----------

ENGINE = [
    # (the experiment, position, text of the message)
    (
        experiment(type_="full (blocksize=1G, nbytes=1M)"),
        "2:35",
        "blocksize 1073741824: every value must be > 0 and at most 1048576",
    ),
    (experiment(type_="full (blocksize=0.5, nbytes=1M)"), "2:35", "a whole number >= 0"),
    (
        experiment(type_="full (blocksize=8K, nbytes=100000000000000000000000)"),
        "2:46",
        "<= 18446744073709551615 for nbytes",
    ),
    (
        experiment(type_="full (blocksize=8K, duration=1e999)"),
        "2:48",
        "a finite number for duration",
    ),
    (
        experiment(type_="full (blocksize=8K, duration=1e12)"),
        "2:48",
        "found duration=1e+12 from a start no earlier than 0 s, expected an end by the "
        "simulated-time limit of a run, 3600 s",
    ),
    (experiment(type_="full (blocksize=uniform(0,0), nbytes=1M)"), "2:43", "a minimum >= 1"),
    (
        experiment(type_="full (blocksize=uniform(0.5,0.5), nbytes=1M)"),
        "2:43",
        "a minimum >= 1",
    ),
    (
        experiment(type_="full (blocksize=exponential(1e300), nbytes=1M)"),
        "2:47",
        "a mean <= 1048576 for blocksize",
    ),
    (
        experiment(type_="burst (blocksize=8K, period=uniform(0,0), duration=1)"),
        "2:47",
        "at least 127 µs, the time one write() takes on sparc-ipc",
    ),
    (
        experiment(type_="burst (blocksize=8K, period=exponential(1e300), duration=1)"),
        "2:59",
        "a mean <= 1000000000000 for period",
    ),
    (
        experiment(type_="full (blocksize=8K, nbytes=1e18)"),
        "2:46",
        "at most 40754716981 bytes: at 100 Mb/s of cells",
    ),
    (
        # The core's check, at the setting (its key path).
        experiment(proto="tcp (window=32K, pacing=1e12)"),
        "2:86",
        "pacing 1000000000000 Mb/s: must be > 0 and at most the adapter's cell rate, 100 Mb/s",
    ),
    (experiment(proto="tcp (window=32K, pacing=1e999)"), "2:86", "a finite number for pacing"),
    (experiment(proto="tcp (window=8G)"), "2:74", "<= 4294967295 for window"),
    (
        experiment(peer="A:5002").replace("own = B:5002", "own = A:5002"),
        "2:101",
        "found peer host A, the test's own host, expected another host",
    ),
    (
        # The core's refusal, at the block size it names (its key path).
        experiment(proto="udp (sndbuf=1K)", rproto="udp"),
        "2:35",
        "the simulator refuses it: transfer 0: UDP datagrams of 8192 bytes: at most 1024",
    ),
    (
        experiment(type_="full (blocksize=64K, nbytes=1M)", proto="udp", rproto="udp"),
        "2:35",
        "the simulator refuses it: connection 0 (A -> B): blocksize 65536: every value must "
        "be > 0 and at most 65507",
    ),
    (experiment() + "sweep { seed = 9223372036854775808; }", "5:16", "<= 9223372036854775807"),
]


@pytest.mark.parametrize("text, where, message", ENGINE)
def test_engine_limits_are_checked_before_anything_is_written(
    capsys, tmp_path, text, where, message
) -> None:
    f = tmp_path / "x.netspec"
    f.write_text(text)
    out = tmp_path / "x.result"
    code, err = cli(capsys, "run", str(f), "--out", str(out))
    assert code == 2
    line = one_line_error(err)
    assert f"x.netspec:{where}: " in line and message in line, line
    assert not out.exists()


#: Values the simulator refuses and Python no longer checks first (issue 30): the
#: experiment, the setting's position, the value as the refusal names it and its words.
#: A conflict points at the setting written later and names the other (model.refusals).
CORE_REFUSES = [
    (
        experiment(type_="rr (duration=1)", proto="udp", rproto="udp"),
        "2:47", 'protocol "udp" must be tcp', "traffic rr is TCP_RR",
    ),
    (
        experiment(type_="full (blocksize=8K, nbytes=1M, duration=1)"),
        "2:59", "not both (against traffic.nbytes=1048576 at ", "x.netspec:2:46)",
    ),
    (
        experiment(type_="full (blocksize=8K, duration=1, nbytes=1M)"),
        "2:58", "not both (against traffic.duration_s=1 at ", "x.netspec:2:48)",
    ),
    (
        experiment(proto="tcp (window=32K, pacing=10)").replace(
            "peer = B:5002;", "peer = B:5002; service = abr;"),
        "2:130", "abr is a service of ATM circuits, without pacing (its rate is ACR) (against "
        "pacing_mbps=10 at ", "x.netspec:2:86)",
    ),
    (
        experiment().replace("sink (blocksize=8K)", "sink (blocksize=0)"),
        "3:35", "read size 0", "must be at least 1 byte",
    ),
    (
        experiment(type_="full (blocksize=0, nbytes=1M)"),
        "2:35", "blocksize 0", "every value must be > 0 and at most 1048576",
    ),
    (
        experiment(type_="burst (blocksize=8K, period=10, duration=1)"),
        "2:47", "block period 10 µs", "at least 127 µs, the time one write() takes on sparc-ipc",
    ),
    (
        experiment(type_="full (blocksize=64K, nbytes=1M)", proto="udp", rproto="udp"),
        "2:35", "blocksize 65536", "at most 65507",
    ),
    (
        experiment(type_="rr (request=0, duration=1)"),
        "2:31", "request 0 bytes", "must be 1 to 1048576 bytes",
    ),
    (experiment(type_="full (blocksize=8K, nbytes=0)"), "2:46", "0 bytes to send", "at least 1"),
    (experiment(type_="full (blocksize=8K, duration=0)"), "2:48", "duration 0 s", "> 0"),
    (
        experiment(type_="burst (blocksize=8K, period=1000, blocks=2M, duration=1)"),
        "2:60", "blocks 2097152", "blocks per period must be 1 to 1000000",
    ),
    (
        experiment(proto="tcp (window=32K, pacing=0)"),
        "2:86", "pacing 0 Mb/s", "must be > 0 and at most the adapter's cell rate, 100 Mb/s",
    ),
]  # fmt: skip


@pytest.mark.parametrize("text, where, value, words", CORE_REFUSES)
def test_the_cores_refusal_names_the_setting_and_its_value(
    capsys, tmp_path, text, where, value, words
) -> None:
    """The core's refusal (its key path) lands on the setting's line and column, never
    1:1 nor the test; its message names the value."""
    f = tmp_path / "x.netspec"
    f.write_text(text)
    code, err = cli(capsys, "run", str(f), "--check")
    assert code == 2
    line = one_line_error(err)
    assert f"x.netspec:{where}: the simulator refuses it: connection 0 (A -> B)" in line or (
        f"x.netspec:{where}: the simulator refuses it: transfer 0" in line
    ), line
    assert value in line and words in line, line


def test_serial_steps_past_the_time_limit_are_refused() -> None:
    steps = "".join(
        f"parallel {{ test s{i} {{ type = burst (blocksize=8K, period=10000, duration=1000); "
        f"own = A:{i}; peer = B:{i}; }} test r{i} {{ type = sink; own = B:{i}; peer = A:{i}; }} }}"
        for i in range(5)
    )
    with pytest.raises(lang.ExperimentError) as e:
        make_plan("cluster { serial { " + steps + " } }")
    assert "found duration=1000 from a start no earlier than 3000 s" in str(e.value)
    assert "(a duration of at most 600 s here)" in str(e.value)


LAN = Path(__file__).resolve().parents[1] / "examples" / "lan-buffers.netspec"
SMALL = ["--set", "snd=16K", "--set", "rcv=16K", "--set", "nbytes=64K", "--replications", "1"]


def test_a_seed_the_result_cannot_store_is_refused_before_anything_runs(capsys, tmp_path):
    """A result stores the seed as int64: 2^63 was taken, every run ran, and storing
    the first part failed (pyarrow OverflowError), again on --resume."""
    out = tmp_path / "s"
    code, err = cli(capsys, "run", str(LAN), *SMALL, "--seed", str(2**63), "--out", str(out))
    assert code == 2 and not out.exists()
    assert "--seed must be >= 0 and at most 9223372036854775807 (2^63-1)" in one_line_error(err)
    with pytest.raises(lang.ExperimentError, match=r"seed 9223372036854775808: must be 0\.\."):
        make_plan(LAN, seed=2**63)
    code, err = cli(capsys, "run", str(LAN), *SMALL, "--seed", str(2**63 - 1), "--out", str(out))
    assert code == 0, err
    assert results.load(out).to_pandas()["seed"].tolist() == [2**63 - 1]


def test_testbed_option_replaces_the_preset_the_file_names(capsys) -> None:
    """Every example names a preset (testbed lan-buffers { }); --testbed was ignored."""
    text = "testbed lan-buffers { mtu = 4352; }\n" + experiment().replace(
        "A:", "alpha-west:"
    ).replace("B:", "alpha-east:")
    plan = make_plan(text, testbed="wan-window")
    tb = plan.experiments[0].testbed
    assert tb.name == "wan-window" and tb.trunks and tb.mtu == 4352  # the block still applies
    assert plan.notes == [
        "<text>:1:9: --testbed wan-window replaces the file's preset lan-buffers; "
        "the block's settings apply on top of it"
    ]
    with pytest.raises(lang.ExperimentError, match="<text>:1:9: found testbed preset 'lan-bufers'"):
        make_plan(text.replace("lan-buffers", "lan-bufers"), testbed="wan-window")


@pytest.mark.parametrize(
    "block, where, message",
    [
        (
            "testbed wan-window { trunk { from = west; to = east; delay_ms = 100; } }",
            "1:22",
            "found a second trunk between west and east, expected one per pair of sites: "
            "testbed wan-window's trunk joins them already",
        ),
        (
            "testbed { trunk { from = a; to = b; delay_ms = 1; }\n"
            "  trunk { from = b; to = a; delay_ms = 2; } defaults { } }",
            "2:3",
            "found a second trunk between b and a, expected one per pair of sites: "
            "the trunk at <text>:1:11 joins them already",
        ),
    ],
)
def test_testbed_blocks_that_would_change_nothing_are_errors(block, where, message) -> None:
    """A second trunk between two sites was appended and never used; a host block
    for a host no test runs on (a misspelt name) did nothing."""
    with pytest.raises(lang.ExperimentError) as e:
        make_plan(block + "\n" + experiment())
    assert str(e.value).startswith(f"<text>:{where}: {message}")


def test_a_misspelt_host_block_is_an_error_at_its_position() -> None:
    """``host ipc1.atn { ... }`` did nothing: the tests run on ipc1.atm."""
    text = experiment().replace("A:", "ipc1.atm:")
    block = "testbed { defaults { } host ipc1.atn { profile = sparc-10; } }\n"
    with pytest.raises(lang.ExperimentError) as e:
        make_plan(block + text)
    assert str(e.value) == (
        "<text>:1:29: found host ipc1.atn, on which no test runs, expected a host of the "
        "tests (B, ipc1.atm): is it ipc1.atm? A host block for any other changes nothing"
    )
    # A host the tests do not use and no misspelling (a real testbed's third host): kept.
    plan = make_plan(block.replace("ipc1.atn", "c") + text)
    assert [h.name for h in plan.experiments[0].hosts] == ["ipc1.atm", "B"]


def test_a_host_block_named_for_the_stem_of_a_tests_host_is_an_error(tmp_path) -> None:
    """``host ipc2 { }`` on lan-buffers, whose tests run on ``ipc2.atm``: the preset maps
    any host name onto its hardware, so the block was a new host no test used and
    changed nothing, silently. Refused, in the file and in a --testbed file alike."""
    text = experiment().replace("A:", "ipc1.atm:").replace("B:", "ipc2.atm:")
    block = "testbed lan-buffers { host ipc2 { profile = sparc-10; } }\n"
    want = (
        "found host ipc2, on which no test runs, expected a host of the tests "
        "(ipc1.atm, ipc2.atm): is it ipc2.atm? A host block for any other changes nothing"
    )
    with pytest.raises(lang.ExperimentError) as e:
        make_plan(block + text)
    assert str(e.value) == "<text>:1:28: " + want
    tb = tmp_path / "tb.netspec"
    tb.write_text(block)
    with pytest.raises(lang.ExperimentError) as e:
        make_plan(text, testbed=str(tb))
    assert str(e.value) == f"{tb}:1:28: " + want
    # Any other unused host block is said, naming the hosts the tests run on.
    tb.write_text(block.replace("ipc2", "ipc3"))
    plan = make_plan(text, testbed=str(tb))
    assert plan.notes == [
        f"{tb}:1:28: host ipc3: no test runs on it, so its block changes nothing "
        "(the tests run on ipc1.atm, ipc2.atm)"
    ]
    # A preset's own hosts are not the user's blocks: no note for them.
    wan = experiment().replace("A:", "law1:").replace("B:", "law2:")
    assert make_plan(wan, testbed="wan-contention").notes == []


def test_reproduce_refuses_a_transfer_the_time_limit_would_cut(capsys) -> None:
    code, err = cli(capsys, "reproduce", "lan-buffers", "--nbytes", "100G", "--replications", "1")
    assert code == 2
    line = one_line_error(err)
    assert "found nbytes=107374182400, expected at most 40754716981 bytes" in line


# --- command-line numbers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "X", "--seed", "-5"], "--seed must be >= 0 and at most 9223372036854775807"),
        (["run", "X", "--seed", str(2**64)], "--seed must be >= 0 and at most"),
        (["run", "X", "--workers", "1000000"], "--workers 1000000: must be 0 (all cores) to 1024"),
        (["reproduce", "lan-buffers", "--workers", "2000"], "--workers 2000: must be 0 (all"),
        (["reproduce", "lan-buffers", "--seed", "-5"], "--seed must be >= 0"),
        (["ttcp", "--seed", str(2**64)], "--seed must be >= 0"),
        (["reproduce", "lan-buffers", "--nbytes", str(2**64)], "--nbytes must be >= 1 and at most"),
        (["reproduce", "lan-buffers", "--send-buffer", str(2**32)], "at most 4294967295 bytes"),
        (["reproduce", "lan-buffers", "--buflen", str(2**32)], "--buflen must be >= 1 and at most"),
        (["reproduce", "lan-buffers", "--buflen", "8.3K"], "a whole number of bytes"),
        (["ttcp", "-l", "5G"], "-l must be >= 1 and at most 4294967295 bytes"),
        (["ttcp", "-p", "70000"], "-p must be >= 1 and at most 65535"),
        (["netperf", "--", "-s", "9G"], "netperf test option -s must be >= 1 and at most"),
        (["calc", "window", "--window-bytes", str(2**32), "--rtt-ms", "1"], "at most 4294967295"),
    ],
)
def test_command_line_numbers_out_of_range_are_usage_errors(capsys, args, message) -> None:
    code, err = cli(capsys, *args)
    assert code == 2
    assert message in one_line_error(err)


def test_every_byte_count_takes_the_language_suffixes() -> None:
    from cellbench.units import byte_count

    parse = byte_count("--nbytes", (1 << 64) - 1)
    assert parse("100G") == 100 << 30 and parse("16K") == 16384 and parse("1e6") == 10**6
    assert parse("33554432") == 32 << 20


@pytest.mark.parametrize(
    "path, value",
    [
        (("connections", 0, "start_s"), float("nan")),
        (("connections", 0, "traffic", "duration_s"), float("inf")),
        (("time_limit_s",), float("-inf")),
    ],
)
def test_nan_or_inf_in_a_run_spec_names_its_key(path, value) -> None:
    from cellbench import _native

    spec = _native.lan_buffers_spec(16384, 16384)
    spec["connections"][0]["traffic"] = {"type": "full", "blocksize": 8192, "duration_s": 1.0}
    where = spec
    for k in path[:-1]:
        where = where[k]
    where[path[-1]] = value
    name = ".".join(str(k) for k in path).replace(".0.", "[0].")
    with pytest.raises(ValueError, match=rf"^run spec: {re.escape(name)} is .*: expected a finite"):
        _native.simulate(spec)


#: Two hosts on a LAN of the "lan" preset (any host name), A transmitting to B.
TWO = (
    "testbed lan {\n  host A { profile = sparc-10; phy = oc3c; HA }\n"
    + "  host B { phy = oc3c; }\nTB}\n"
)


@pytest.mark.parametrize(
    "host, testbed, where, message",
    [
        (
            "phy = ethernet10; spacing_us = 20;", "", "2:62",
            "found spacing_us = 20 on host A, whose connections use its Ethernet (ethernet10), "
            "expected ATM adapter settings on a host whose connections use ATM",
        ),
        (
            "adapter = sba200; spacing = cell-burst;", "", "2:62",
            "found spacing = cell-burst on host A without a spacing, expected spacing_us = US "
            "too: the mean cell spacing its bursts keep",
        ),
        (
            "", "  hosts = [B, zz];\n", "4:15",
            "found host zz in hosts = [...], on which no test runs, expected hosts of the "
            "tests (A, B): the list orders them",
        ),
        (
            "site = w;", "  trunk { from = w; to = lan; delay_ms = 1; }\n"
            "  trunk { from = w; to = nowhere; delay_ms = 1; }\n", "5:21",
            "found to = nowhere, a site with no host and no other trunk, expected a site of "
            "the testbed (lan, w): a trunk to nowhere else carries nothing",
        ),
        # Refusals that pointed at 1:1 (the simulator's, of a host's or a trunk's value)
        # or at a test, not at the setting.
        (
            "spacing_us = 0.5;", "", "2:44",
            'the simulator refuses it: host "A": cell interval 0.5 µs not allowed: at least '
            "the line's cell time 2.726337 µs",
        ),
        (
            "site = w;", "  trunk { from = w; to = lan; delay_ms = 1; upc_t_us = 0; "
            "upc_tau_us = 0; }\n", "4:45",
            "the simulator refuses it: trunk 0 (w -> lan): UPC T 0 µs: must be a finite "
            "number > 0",
        ),
        (
            "", "  switch { buffer_cells = 100; policy = epd; }\n", "4:12",
            "the simulator refuses it: switch epd_threshold_cells 200 exceeds buffer_cells 100",
        ),
        (
            "", "  mtu = 68;\n", "4:9", "found 68, expected the IP MTU in bytes in 576..65527",
        ),
        (
            "", "  switch { flow_control = credit; }\n", "4:12",
            "the simulator refuses it: switch flow_control credit with credits unset: expected "
            "credits >= 1 (cells per VC per hop)",
        ),
        (
            "ethernet = ethernet10; ethernet_name = B;", "", "2:67",
            "found ethernet_name = B on host A, expected a name of its own (host B has it)",
        ),
        (
            "", "  trunk { from = w; to = w; delay_ms = 1; }\n", "4:21",
            "found trunk from w to itself, expected two different sites",
        ),
        (
            "", "  mtu = 65527; encap = llc-snap;\n", "4:9",
            "found mtu = 65527, expected an MTU of 576..65519: what one AAL5 PDU carries with "
            "llc-snap (8 bytes of header)",
        ),
    ],
)  # fmt: skip
def test_what_the_language_accepted_silently_is_refused_at_the_setting(
    host, testbed, where, message
) -> None:
    """Issue 31 §3: settings that did nothing (an ATM adapter's on an Ethernet host,
    cell-burst without a spacing, hosts = [zz], a trunk to an unknown site) were
    accepted without a word; some refusals pointed at 1:1 or at a test."""
    text = TWO.replace("HA", host).replace("TB", testbed) + experiment()
    with pytest.raises(lang.ExperimentError) as e:
        make_plan(text)
    assert str(e.value).startswith(f"<text>:{where}: {message}"), str(e.value)


def test_a_host_block_naming_no_host_of_the_preset_is_refused(capsys) -> None:
    text = "testbed lan-buffers {\n  host zz { profile = sparc-10; }\n}\n" + experiment()
    text = text.replace("A:", "ipc1.atm:").replace("B:", "ipc2.atm:")
    with pytest.raises(lang.ExperimentError) as e:
        make_plan(text)
    assert str(e.value) == (
        "<text>:2:8: found host zz, a host of neither testbed lan-buffers nor the tests, "
        "expected one of them (ipc1.atm, ipc2.atm): a host block for any other changes nothing"
    )
    # Under --testbed, the hosts of the testbed it names.
    with pytest.raises(lang.ExperimentError, match="a host of neither testbed wan-window"):
        make_plan(text.replace("ipc1.atm:", "alpha-west:").replace(
            "ipc2.atm:", "alpha-east:"), testbed="wan-window")  # fmt: skip


def test_a_sites_switch_is_checked_as_the_testbeds_is() -> None:
    """``switch e { epd_threshold_cells = 300; }`` past its 256-cell buffer was taken."""
    text = TWO.replace("HA", "site = e;").replace(
        "TB", "  switch e { policy = epd; epd_threshold_cells = 300; }\n"
    )
    with pytest.raises(lang.ExperimentError) as e:
        make_plan(text + experiment())
    assert str(e.value) == (
        "<text>:4:28: the simulator refuses it: switch e epd_threshold_cells 300 exceeds "
        "buffer_cells 256: the threshold must fit in the buffer"
    )


#: A switch's or trunk's value the core refuses (its range is the core's check alone:
#: testbed/keys.spec_type), the testbed's lines, where the refusal lands and its words
#: (the value among them). Line 4 is the testbed's; the sweep's list is on line 6.
TESTBED_CORE_REFUSES = [
    ("  switch { buffer_cells = 0; }\n", [], "4:12",
     "switch buffer_cells 0: every output port needs at least 1 cell"),
    ("  switch { clp1_threshold_cells = 0; }\n", [], "4:12",
     "switch clp1_threshold_cells 0: must be 1 to buffer_cells (256)"),
    ("  switch { flow_control = credit; credits = 0; }\n", [], "4:35",
     "switch flow_control credit with credits 0: expected credits >= 1"),
    ("  switch w { buffer_cells = 0; }\n  trunk { from = w; to = lan; delay_ms = 1; }\n", [],
     "4:14", "switch w buffer_cells 0: every output port needs at least 1 cell"),
    ("  trunk { from = w; to = lan; delay_ms = -1; }\n", [], "4:31",
     "trunk 0 (w -> lan): delay -1 ms: must be a finite number >= 0 and at most 1e9 ms"),
    ("  trunk { from = w; to = lan; delay_ms = 2e9; }\n", [], "4:31",
     "trunk 0 (w -> lan): delay 2000000000 ms: must be a finite number >= 0"),
    ("  trunk { from = w; to = lan; delay_ms = 1; upc_t_us = -3; upc_tau_us = 0; }\n", [],
     "4:45", "trunk 0 (w -> lan): UPC T -3 µs: must be a finite number > 0"),
    ("  trunk { from = w; to = lan; delay_ms = 1; upc_t_us = 3; upc_tau_us = -1; }\n", [],
     "4:59", "trunk 0 (w -> lan): UPC tau -1 µs: must be a finite number >= 0"),
    # A value a sweep or --set gives: the refusal names where it is written, not the
    # file's setting it replaced.
    ("  switch { buffer_cells = 64; }\n", [], "6:44", "switch buffer_cells 0: every output"),
    ("  switch { buffer_cells = 64; }\n", ["--set", "testbed.switch.buffer_cells=0"],
     "--set:1:29", "switch buffer_cells 0: every output"),
]  # fmt: skip


@pytest.mark.parametrize("testbed, options, where, words", TESTBED_CORE_REFUSES)
def test_a_switch_or_trunk_value_the_core_refuses_lands_on_its_setting(
    capsys, tmp_path, testbed, options, where, words
) -> None:
    """Issue 30: a switch's and a trunk's range is the core's check only (Python reads
    the type the spec holds); the refusal lands on the setting, never 1:1."""
    text = TWO.replace("HA", "site = w;" if "trunk" in testbed else "").replace("TB", testbed)
    if where.startswith("6:"):
        text += "sweep { testbed.switch.buffer_cells = [64, 0]; }\n"
    f = tmp_path / "x.netspec"
    f.write_text(text + experiment())
    code, err = cli(capsys, "run", str(f), "--check", *options)
    assert code == 2
    line = one_line_error(err)
    at = where if where.startswith("--set") else f"x.netspec:{where}"
    assert f"{at}: the simulator refuses it: {words}" in line, line


#: What Python still refuses of a switch's keys: the type the spec holds, and an EPD
#: threshold of 0, which the core reads only under policy = epd (tail-drop and ppd
#: would take it without a word).
@pytest.mark.parametrize(
    "switch, where, message",
    [
        ("buffer_cells = -5;", "4:27",
         "found -5, expected a whole number >= 0 and <= 4294967295 for cells per output port"),
        ("buffer_cells = 1.5;", "4:27",
         "found 1.5, expected a whole number >= 0 and <= 4294967295 for cells per output port"),
        ("credits = x;", "4:22",
         "found x, expected a whole number >= 0 and <= 4294967295 for credits"),
        ("epd_threshold_cells = 0;", "4:34",
         "found 0, expected the EPD threshold in cells in 1..4.29497e+09"),
        ("policy = ppd; epd_threshold_cells = 0;", "4:48",
         "found 0, expected the EPD threshold in cells in 1..4.29497e+09"),
    ],
)  # fmt: skip
def test_a_switch_value_of_the_wrong_type_is_refused_at_its_value(switch, where, message) -> None:
    text = TWO.replace("HA", "").replace("TB", f"  switch {{ {switch} }}\n")
    with pytest.raises(lang.ExperimentError) as e:
        make_plan(text + experiment())
    assert str(e.value).startswith(f"<text>:{where}: {message}"), str(e.value)
