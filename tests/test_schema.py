"""One schema (issue 30): the testbed's records take every default and range of a run
spec's key from the core's vocabulary (``vocab.SPEC_KEYS``), none written in Python; a
refusal of the core carries its key path and lands on the setting."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from cellbench import _native, vocab
from cellbench.experiment import lang, model
from cellbench.experiment import testbed as tb
from cellbench.experiment.lang import ExperimentError
from cellbench.experiment.model.refusals import refusal_pos
from cellbench.experiment.testbed.keys import HOST_KEYS, SWITCH_KEYS, TRUNK_KEYS
from cellbench.experiment.testbed.schema import SWITCH_DEFAULTS, resolved_switch

PYTHON = Path(__file__).resolve().parents[1] / "python" / "cellbench"


def test_every_host_field_default_is_the_run_specs():
    fields = {f.name: f for f in dataclasses.fields(tb.HostSpec)}
    checked = 0
    for key in HOST_KEYS.values():
        if key.spec is None or key.field not in fields:
            continue
        f = fields[key.field]
        assert f.default == vocab.DEFAULTS["host"].get(key.spec), key
        checked += 1
    assert checked >= 12


def test_every_traffic_field_default_is_the_run_specs():
    """A test's traffic holds the run spec's default for each key it leaves out, read
    from the vocabulary (every traffic type's: full's block size, burst's blocks, rr's
    request and response)."""
    fields = {f.name: f for f in dataclasses.fields(model.Traffic)}
    for key in ("blocksize", "blocks", "request", "response"):
        assert fields[key].default == vocab.DEFAULTS["traffic"][key], key
    assert vocab.spec_key("traffic", "blocks")["default"] == 1


#: The connection's keys that are not a value of its own in the record: its ends and
#: traffic (records of their own), the testbed's MTU and encapsulation, the connection's
#: flavour (the hosts'), its start (its tree's) and its service (``abr``, a record).
_NOT_FIELDS = {"transmitter", "receiver", "traffic", "mtu", "encap", "flavour", "start_s"}


def test_a_connection_holds_no_default_of_its_own():
    """Every key of the connection record that ``model.Connection`` holds has no default
    there but None (unset) or the empty list: the builder gives each its value, the
    run spec's default read from the vocabulary where the tests set none."""
    keys = {name for (record, name) in vocab.SPEC_KEYS if record == "connection"}
    fields = {f.name: f for f in dataclasses.fields(model.Connection)}
    held = keys - _NOT_FIELDS
    assert held <= set(fields), held - set(fields)
    for name in held:
        f = fields[name]
        assert f.default in (dataclasses.MISSING, None), (name, f.default)
        assert f.default_factory in (dataclasses.MISSING, list), name


def _connections(text: str, name: str = "c.netspec"):
    exp = model.build(lang.parse(text, name))
    return exp, exp.spec(1, 0)["connections"]


PAIR = """testbed { }
cluster {
  test t { type = TYPE; PROTO own = a:1; peer = b:1; }
  test r { type = SINK; RPROTO own = b:1; peer = a:1; }
}
"""


def _pair(type_="full (nbytes=1K)", proto="", sink="sink", rproto="", testbed="testbed { }"):
    text = (
        PAIR.replace("TYPE", type_)
        .replace("RPROTO", rproto)
        .replace("PROTO", proto)
        .replace("SINK", sink)
        .replace("testbed { }", testbed)
    )
    return _connections(text)


def test_a_connection_sends_only_the_keys_its_tests_set():
    _, [c] = _pair()
    assert c == {"transmitter": "a", "receiver": "b", "traffic": {"type": "full", "nbytes": 1024}}
    _, [c] = _pair("burst (period=1000, duration=1)")
    assert c["traffic"] == {"type": "burst", "period_us": 1000.0, "duration_s": 1.0}
    _, [c] = _pair("rr (duration=1)")
    assert c["traffic"] == {"type": "rr", "duration_s": 1.0}
    _, [c] = _pair(
        "burstq (size=20000, rate=1000000, duration=1)",
        "protocol = tcp (sndbuf=16K, nodelay=true, pacing=10);",
        "sink (blocksize=4K)",
        "protocol = tcp (rcvbuf=20K);",
        "testbed { encap = llc-snap; mtu = 4000; }",
    )
    assert c == {
        "transmitter": "a",
        "receiver": "b",
        "protocol": "tcp",
        "sndbuf": 16384,
        "rcvbuf": 20480,
        "nodelay": True,
        "receiver_blocksize": 4096,
        "encap": "llc-snap",
        "mtu": 4000,
        "pacing_mbps": 10.0,
        "traffic": {
            "type": "burstq",
            "blocksize": 6667,
            "blocks": 3,
            "period_us": 160008.0,
            "duration_s": 1.0,
        },
    }


#: A connection's resolved values (what the engines and the stored rows read) by the
#: run spec's key they stand for.
_RESOLVED = {
    "protocol": lambda c, t: c.protocol,
    "sndbuf": lambda c, t: c.sndbuf,
    "rcvbuf": lambda c, t: c.rcvbuf,
    "nodelay": lambda c, t: c.nodelay,
    "receiver_blocksize": lambda c, t: c.receiver_blocksize,
    "encap": lambda c, t: t.encap,
    "pacing_mbps": lambda c, t: c.pacing_mbps,
    "after": lambda c, t: c.after,
}


#: The example experiments and the studies' files: every sweep point of each is checked.
EXPERIMENT_FILES = sorted((PYTHON.parents[1] / "examples").glob("*.netspec")) + sorted(
    (PYTHON / "reproduce").rglob("*.netspec")
)


@pytest.mark.parametrize("file", EXPERIMENT_FILES, ids=lambda p: p.name)
def test_what_a_connection_holds_is_what_the_core_reads(file):
    """The run spec a connection sends, read with the core's defaults (the vocabulary's),
    gives every value the connection holds: what the engines use and the rows store is
    what the simulator runs."""
    from cellbench.experiment.plan import make_plan

    plan = make_plan(file.read_text(), file=file.name)
    defaults, traffic = vocab.DEFAULTS["connection"], vocab.DEFAULTS["traffic"]
    for point, exp in enumerate(plan.experiments):
        sent = plan.task(point * plan.replications).spec["connections"]
        for c, spec in zip(plan.connections(point), sent, strict=True):
            read = defaults | spec
            for key, held in _RESOLVED.items():
                assert held(c, exp.testbed) == read[key], (point, c.name, key)
            if c.interface != "ethernet":
                mtu = read["mtu"] or vocab.ENCAP_MTU[read["encap"]]
                assert mtu == exp.testbed.mtu, (point, c.name)
            t = traffic | spec["traffic"]
            if "blocksize" not in c.traffic.random and c.traffic.type != "rr":
                assert c.traffic.blocksize == t["blocksize"], (point, c.name)
            if t["type"] in ("burst", "burstq"):
                assert c.traffic.blocks == t["blocks"], (point, c.name)
            if t["type"] == "rr":
                assert (c.traffic.request, c.traffic.response) == (t["request"], t["response"])


def test_the_testbed_sends_no_switch_key_it_does_not_set():
    bed = tb.Testbed(name="t")
    assert bed.switch == {} and bed.sites == {}
    assert resolved_switch(bed.switch) == {
        k: vocab.DEFAULTS["switch"].get(k) for k in SWITCH_DEFAULTS
    }
    assert vocab.DEFAULTS["switch"]["epd_threshold_cells"] == 200  # the core's, with its source
    assert (bed.mtu, bed.encap) == (
        vocab.ENCAP_MTU[vocab.DEFAULTS["connection"]["encap"]],
        vocab.DEFAULTS["connection"]["encap"],
    )


def _setting(key: str, text: str) -> lang.Setting:
    doc = lang.parse(f"testbed {{ switch {{ {key} = {text}; }} }}", "k.netspec")
    return doc.blocks[0].blocks()[0].settings()[0]


@pytest.mark.parametrize(
    "table, record",
    [(HOST_KEYS, "host"), (SWITCH_KEYS, "switch"), (TRUNK_KEYS, None)],
)
def test_every_range_is_the_vocabularys(table, record):
    """A key with a range in the vocabulary reads its bounds. A host's key, and the EPD
    threshold (the core reads it only under policy = epd), refuse past them, so the
    range the language checks is the core's; any other switch or trunk key reads what
    its type holds past them, the range the core's check alone (test_bad_input)."""
    tried = 0
    for name, key in table.items():
        spec = key.spec
        if spec is None or name == "epd_threshold_share":
            continue
        rec, k = spec.split(".") if "." in spec else (record or "trunk", spec)
        entry = vocab.SPEC_KEYS.get((rec, k))
        if entry is None or entry["range"] is None:
            continue
        lo, hi = entry["range"]
        whole = entry["kind"] == "int"
        fmt = (lambda x: str(int(x))) if whole else repr
        if not entry["above"]:
            assert key.read(_setting(name, fmt(lo))) == lo, name
        assert key.read(_setting(name, fmt(hi))) == hi, name
        if record == "host" or name == "epd_threshold_cells":
            for past in (hi * 2 if hi > 0 else 1, lo - 1):
                with pytest.raises(ExperimentError):
                    key.read(_setting(name, fmt(past)))
        else:
            # Below the range, in the type: the core's to refuse (a u32 or a float).
            assert key.read(_setting(name, fmt(lo - 1))) == lo - 1, name
            if whole:
                with pytest.raises(ExperimentError):
                    key.read(_setting(name, fmt(hi + 1)))
            else:
                assert key.read(_setting(name, fmt(hi * 2))) == hi * 2, name
        tried += 1
    assert tried >= 3


#: Where the testbed's and the model's records live: their defaults and ranges must come
#: from ``vocab``.
SCANNED = [
    *sorted((PYTHON / "experiment" / "testbed").glob("*.py")),
    *sorted((PYTHON / "experiment" / "model").glob("*.py")),
    PYTHON / "experiment" / "abr.py",
    PYTHON / "cli" / "tools.py",
]


#: Numbers that are a tool's own, not a copy of the run spec's: ttcp's and netperf's
#: 8192-byte default write (ttcp.c's buflen; netperf -m as cellbench gives it), and an
#: hour's 3600 seconds in ttcp's h:mm:ss.
TOOLS_OWN = {("tools.py", 8192), ("tools.py", 3600)}


def _is_scale(x: float) -> bool:
    """A power of ten: a unit's scale (µs per s, ms per s), not a bound."""
    return x > 0 and float(f"{x:e}".split("e")[0]) == 1.0


def _spec_values() -> set:
    """Every default and range bound of the run spec's keys that would tell a copy
    (numbers past the small ones anyone writes, not a unit's scale, and every named
    default of the testbed's records)."""
    out: set = set()
    for entry in vocab.SPEC_KEYS.values():
        d = entry["default"]
        if isinstance(d, str) and entry["record"] in (
            "host",
            "switch",
            "trunk",
            "upc",
            "connection",
            "traffic",
        ):
            out.add(d)
        if isinstance(d, (int, float)) and not isinstance(d, bool) and d > 100:
            out.add(d)
        for bound in entry["range"] or ():
            if 100 < bound < 1e15:
                out.add(bound)
    return {v for v in out if isinstance(v, str) or not _is_scale(v)}


def _dataclass_defaults(tree: ast.Module):
    """Every literal a dataclass field defaults to."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(
            "dataclass" in ast.unparse(d) for d in node.decorator_list
        ):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.value, ast.Constant):
                    yield node.name, item, item.value.value


def test_no_default_or_range_of_a_spec_key_is_written_in_python():
    values = _spec_values()
    assert {52428, 8192, 200, "sparc-ipc", "tail-drop", "tcp", "vc-mux"} <= values
    found = []
    for path in SCANNED:
        tree = ast.parse(path.read_text(), str(path))
        for cls, item, v in _dataclass_defaults(tree):
            if v in values and not isinstance(v, bool):
                found.append(f"{path.name}:{item.lineno}: {cls}.{ast.unparse(item.target)} = {v!r}")
        for node in ast.walk(tree):
            # Numbers only outside docstrings and messages: a bound in code.
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, (int, float))
                and not isinstance(node.value, bool)
                and node.value in values
                and (path.name, node.value) not in TOOLS_OWN
            ):
                found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert not found, "a run spec's default or range written in Python:\n" + "\n".join(found)


#: The model's and abr.py's readers: every number they write is 0, 1 or one of these,
#: each with why it is not a range or a default of the run spec (those come from
#: ``vocab``). A new literal there fails the test below until it is listed with its reason.
MODEL_FILES = [
    *sorted((PYTHON / "experiment" / "model").glob("*.py")),
    PYTHON / "experiment" / "abr.py",
    PYTHON / "experiment" / "values.py",
]
MODEL_OWN = {
    ("checks.py", 1e6): "bit/s per Mb/s",
    ("checks.py", 1e-6): "seconds per µs",
    ("checks.py", 8): "bits a byte",
    ("traffic.py", 1e6): "µs per second",
    ("traffic.py", 8): "bits a byte",
    ("traffic.py", 2): "uniform(min, max) takes two arguments",
    ("records.py", 2): "a uniform law's mean, (min + max) / 2",
    ("limits.py", 1e6): "µs per second",
    ("limits.py", 48): "an ATM cell's payload bytes (ITU-T I.361)",
    ("limits.py", 53): "an ATM cell's bytes (ITU-T I.361)",
    ("limits.py", 63): "SEED_MAX: an int64 column's largest",
    ("limits.py", 88): "TCP_MIN_MSS, Linux include/net/tcp.h (--engine real's kernels)",
    ("limits.py", 32767): "MAX_TCP_WINDOW, Linux include/net/tcp.h (--engine real's kernels)",
    ("hosts.py", 0.8): "MISSPELT: difflib's ratio that calls a host name a misspelling",
    ("values.py", 32): "U32_MAX's width",
    ("values.py", 64): "U64_MAX's width",
    ("values.py", 1e20): "past it a number is shown as %g, not in full",
    ("abr.py", 1e3): "the K of a rate (decimal)",
    ("abr.py", 1e6): "the M of a rate (decimal)",
    ("abr.py", 1e9): "the G of a rate (decimal)",
}


def test_the_model_writes_no_bound_of_its_own():
    """Every number in the model package, abr.py and values.py is 0, 1 or listed in MODEL_OWN with
    its reason: a range or default written there (a 1e12, a 32767) fails here."""
    found, used = [], set()
    for path in MODEL_FILES:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, (int, float))
                and not isinstance(node.value, bool)
                and node.value not in (0, 1)
            ):
                if (path.name, node.value) in MODEL_OWN:
                    used.add((path.name, node.value))
                else:
                    found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert not found, "a number written in the model (read it from vocab):\n" + "\n".join(found)
    assert used == set(MODEL_OWN), f"listed but no longer written: {set(MODEL_OWN) - used}"


def test_ericas_defaults_are_the_cores():
    """ERICA's target and interval left out: the core's serde-less defaults, exported by
    the vocabulary (sim::spec::ERICA_TARGET, ERICA_INTERVAL_US), read by abr.py."""
    from cellbench.experiment import abr

    assert vocab.DEFAULTS["abr_switch"] == {"target": 0.9, "interval_us": 1000.0}
    assert (abr.ERICA_TARGET, abr.ERICA_INTERVAL_US) == (0.9, 1000.0)
    lo, hi = vocab.spec_range("abr_switch", "target")
    assert lo < abr.ERICA_TARGET <= hi


def test_a_refusal_of_the_core_carries_its_key_path():
    spec = {
        "switch": {"policy": "epd", "buffer_cells": 64},
        "sites": {"w": {"clp1_threshold_cells": 0}},
        "hosts": [{"name": "a", "site": "w"}, {"name": "b", "distance_m": -1}],
        "trunks": [{"from": "w", "to": "lan", "delay_ms": 1}],
        "connections": [{"transmitter": "a", "receiver": "b", "traffic": {"type": "full"}}],
    }
    with pytest.raises(_native.SpecError) as e:
        _native.check_spec(spec)
    assert e.value.path == {
        "record": "switch",
        "index": None,
        "name": None,
        "key": "buffer_cells",
        "value": "64",
    }
    assert str(e.value).startswith("switch epd_threshold_cells 200 exceeds buffer_cells 64")
    spec["switch"] = {}
    with pytest.raises(_native.SpecError) as e:
        _native.check_spec(spec)
    assert (e.value.path["record"], e.value.path["name"], e.value.path["key"]) == (
        "switch",
        "w",
        "clp1_threshold_cells",
    )
    del spec["sites"]
    with pytest.raises(_native.SpecError) as e:
        _native.check_spec(spec)
    assert e.value.path == {
        "record": "host",
        "index": None,
        "name": "b",
        "key": "distance_m",
        "value": "-1",
    }


def test_a_refusal_of_the_core_says_what_it_refuses():
    """``SpecError.kind``: one setting, two that conflict (``other``: the second's path),
    a record as a whole (its path without a key), the spec as a whole (no path)."""
    spec = {
        "switch": {"policy": "epd", "buffer_cells": 64},
        "hosts": [{"name": "a"}, {"name": "b"}],
        "connections": [{"transmitter": "a", "receiver": "b", "traffic": {"type": "full"}}],
    }
    with pytest.raises(_native.SpecError) as e:
        _native.check_spec(spec)
    assert (e.value.kind, e.value.path["key"]) == ("conflict", "buffer_cells")
    assert e.value.other == {
        "record": "switch",
        "index": None,
        "name": None,
        "key": "epd_threshold_cells",
        "value": "200",
    }
    spec["switch"] = {}
    spec["hosts"][1]["distance_m"] = -1
    with pytest.raises(_native.SpecError) as e:
        _native.check_spec(spec)
    assert (e.value.kind, e.value.path["key"], e.value.other) == ("setting", "distance_m", None)
    del spec["hosts"][1]["distance_m"]
    spec["hosts"][1]["site"] = "x"
    with pytest.raises(_native.SpecError) as e:
        _native.check_spec(spec)
    assert str(e.value) == 'connection 0 (a -> b): no trunk joins site "lan" to site "x"'
    assert e.value.kind == "record"
    assert e.value.path == {
        "record": "connection",
        "index": 0,
        "name": None,
        "key": "",
        "value": "",
    }
    with pytest.raises(_native.SpecError) as e:
        _native.check_spec({"hosts": 1})
    assert (e.value.kind, e.value.path, e.value.other) == ("spec", None, None)


EXPERIMENT = """testbed {
  defaults { profile = sparc-10; }
  host a { site = w; }
  trunk { from = w; to = lan; delay_ms = 1; }
  SWITCH
}
cluster {
  test t { type = full (nbytes=1K); own = a:1; peer = b:1; }
  test r { type = sink; own = b:1; peer = a:1; }
}
"""


@pytest.mark.parametrize(
    "switch, where, words",
    [
        ("switch w { policy = epd; buffer_cells = 100; }", "5:28", "switch w epd_threshold"),
        ("switch { credits = 4; }", "5:12", "switch credits 4: credits need flow_control"),
        ("switch w { abr = efci (threshold = 300); }", "5:14", "switch w abr threshold 300"),
    ],
)
def test_a_refusal_lands_on_the_setting(switch, where, words):
    exp = model.build(lang.parse(EXPERIMENT.replace("SWITCH", switch), "e.netspec"))
    with pytest.raises(ExperimentError) as e:
        model.check_with_engine(exp, 1)
    assert str(e.value).startswith(f"e.netspec:{where}: the simulator refuses it: {words}")


CONNECTION = """testbed {
  mtu = 9180;
  host a { pacing_counts = payloads; }
}
cluster {
  test t { type = TYPE; protocol = PROTO; own = a:1; peer = b:1; }
  test r { type = sink; protocol = RPROTO; own = b:1; peer = a:1; }
}
"""


@pytest.mark.parametrize(
    "type_, proto, rproto, at, words",
    [
        # 99 Mb/s of payloads is more than a 100 Mb/s line's cells carry (48 of 53 bytes):
        # the model checks the cell rate, the core what the rate counts.
        ("full (nbytes=1K)", "tcp (pacing = 99)", "tcp", "99", "pacing 99 Mb/s"),
        # A datagram larger than the send buffer: the core's check, at the block size.
        ("full (blocksize=8K, nbytes=1M)", "udp (sndbuf=1K)", "udp", "8K", "UDP datagrams"),
    ],
)
def test_a_connections_refusal_lands_on_its_tests_setting(type_, proto, rproto, at, words):
    text = CONNECTION.replace("TYPE", type_).replace("RPROTO", rproto).replace("PROTO", proto)
    exp = model.build(lang.parse(text, "c.netspec"))
    with pytest.raises(ExperimentError) as e:
        model.check_with_engine(exp, 1)
    line = text.splitlines()[5]
    where = f"c.netspec:6:{line.index(at, line.index('type')) + 1}"
    assert str(e.value).startswith(f"{where}: the simulator refuses it: "), str(e.value)
    assert words in str(e.value)


def test_a_connections_mtu_refusal_lands_on_the_testbeds_mtu():
    text = CONNECTION.replace("TYPE", "full (nbytes=1K)").replace("RPROTO", "tcp")
    exp = model.build(lang.parse(text.replace("PROTO", "tcp"), "c.netspec"))
    path = {"record": "connection", "index": 0, "name": None, "key": "mtu", "value": "9180"}
    assert str(refusal_pos(exp, path)) == "c.netspec:2:3"
    # A key no setting of the test gives: the test.
    path["key"] = "flavour"
    assert refusal_pos(exp, path) == exp.connections[0].pos
