"""Bounded reads (issue 31 §3): every file another program or person handed us (a
result's result.json and manifest.json, a capture and its description, an experiment
or testbed file) is read only if it is a regular file, only up to a bound, and
whatever it holds is one line on the terminal, never a hang, a memory blow-up, a
traceback or an escape sequence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cellbench import cells, files, wire
from cellbench.cli import main
from cellbench.experiment import results

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SMALL = [
    "run", str(EXAMPLES / "lan-buffers.netspec"), "--set", "snd=16K", "--set", "rcv=16K",
    "--set", "nbytes=64K", "--replications", "2", "--workers", "1",
]  # fmt: skip
TESTER = textwrap.dedent(
    """\
    testbed lan {
        host ws { profile = sparc-10; phy = oc3c; spacing_us = 19.45; }
        host sink { profile = sparc-10; phy = taxi100; }
    }
    tester { port = sink; }
    cluster {
        test t { type = full (blocksize=8K, nbytes=64K); protocol = tcp (window=32K);
                 own = ws:5001; peer = sink:5001; }
        test r { type = sink (blocksize=8K); protocol = tcp (window=32K);
                 own = sink:5001; peer = ws:5001; }
    }
    """
)

#: Runs each command line in a child that cannot take more than 2 GB nor 60 s, so that a
#: reader without a bound fails this test instead of the machine (before: 17.6 GB of
#: /dev/zero in 60 s; a FIFO waited for ever). Prints [status, stderr] per command.
GUARDED = """
import contextlib, io, json, resource, signal, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
signal.alarm(60)
from cellbench.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv)
        except BaseException as e:
            status = repr(e)
    out.append([status, err.getvalue()])
print(json.dumps(out))
"""


def guarded(*argvs: list[str], cwd: Path) -> list[tuple[object, str]]:
    r = subprocess.run(
        [sys.executable, "-c", GUARDED, json.dumps(argvs)],
        capture_output=True, text=True, cwd=cwd, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    return [tuple(x) for x in json.loads(r.stdout)]


def one_line(status, err: str) -> str:
    assert status == 2, (status, err[-1000:])
    assert "Traceback" not in err and err.count("\n") == 1, err[-1000:]
    return err


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("stored") / "r"
    assert main([*SMALL, "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("name", ["result.json", "manifest.json"])
@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_a_result_file_that_is_not_a_regular_file_is_one_line(stored, tmp_path, name, kind):
    """show, report, plot and --resume of a result whose result.json or manifest.json
    is a link to /dev/zero or a FIFO: one line naming it (--resume: a repair)."""
    r = tmp_path / "r"
    subprocess.run(["cp", "-a", str(stored), str(r)], check=True)
    (r / name).unlink()
    if kind == "fifo":
        os.mkfifo(r / name)
        what = "a FIFO"
    else:
        (r / name).symlink_to("/dev/zero")
        what = "a character device"
    got = guarded(
        ["show", str(r)],
        ["report", str(r), "-o", str(tmp_path / "p.html")],
        ["plot", str(r), "--kind", "window", "-o", str(tmp_path / "p.png")],
        [*SMALL, "--out", str(r), "--resume"],
        cwd=tmp_path,
    )
    for status, err in got[:3]:
        assert f"{name}: {what}, expected a result's JSON in a regular file" in one_line(
            status, err
        )
    status, err = got[3]
    assert status == 0, err[-1000:]
    assert f"cellbench: repair: {r}: {name}: {what}, expected a result's JSON" in err
    assert (r / name).is_file() and not (r / name).is_symlink()
    assert main(["show", str(r)]) == 0


def test_a_result_json_past_the_bound_is_refused_before_it_is_read(stored, tmp_path, capsys):
    r = tmp_path / "r"
    subprocess.run(["cp", "-a", str(stored), str(r)], check=True)
    with open(r / "result.json", "r+b") as f:
        f.truncate(65 << 20)  # (sparse: 65 MB of nothing)
    assert main(["show", str(r)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"result.json: {65 << 20} bytes, expected a result's JSON of at most" in err


@pytest.fixture(scope="module")
def captured(tmp_path_factory) -> Path:
    """A result whose tester wrote cells/run0.pcap and its description."""
    d = tmp_path_factory.mktemp("captured")
    (d / "t.netspec").write_text(TESTER)
    assert main(["run", str(d / "t.netspec"), "--out", str(d / "r")]) == 0
    return d / "r"


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_a_capture_description_that_is_not_a_regular_file_is_one_line(captured, tmp_path, kind):
    """`cells FILE` and `plot --kind iat` of the file or its result, with FILE.pcap.json
    a link to /dev/zero or a FIFO."""
    r = tmp_path / "r"
    subprocess.run(["cp", "-a", str(captured), str(r)], check=True)
    side = r / "cells" / "run0.pcap.json"
    side.unlink()
    if kind == "fifo":
        os.mkfifo(side)
    else:
        side.symlink_to("/dev/zero")
    got = guarded(
        ["cells", str(r / "cells" / "run0.pcap")],
        ["plot", str(r / "cells" / "run0.pcap"), "--kind", "iat", "-o", str(tmp_path / "a.png")],
        ["plot", str(r), "--kind", "iat", "-o", str(tmp_path / "b.png")],
        cwd=tmp_path,
    )
    what = "a FIFO" if kind == "fifo" else "a character device"
    for status, err in got:
        assert f"run0.pcap.json: {what}, expected a capture's description" in one_line(status, err)


def test_cells_reads_only_a_bounded_regular_capture(tmp_path, monkeypatch, capsys):
    """`cells FILE` read any regular file whole; now the bound read_pcap keeps."""
    pcap = tmp_path / "a.pcap"
    wire.write_pcap(pcap, bytes(100), vpi=0, vci=32)
    monkeypatch.setattr(wire, "MAX_PCAP_BYTES", pcap.stat().st_size - 1)
    with pytest.raises(cells.CaptureError, match=r"bytes, expected a capture of at most \d+"):
        cells.read(pcap, slot_us=2.726)
    monkeypatch.undo()
    assert cells.read(pcap, slot_us=2.726).cells == 3
    assert main(["cells", "/dev/zero", "--slot-us", "2.726"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "cellbench: error: /dev/zero: a character device, expected a capture in a regular "
        "file (read a part of it: editcap -c)\n"
    )


def test_a_deep_or_hostile_capture_description_is_one_line_and_escaped(tmp_path, capsys):
    """A description 100k levels deep was a RecursionError; its text went to the
    terminal raw (an escape sequence could clear the screen or retitle it)."""
    pcap = tmp_path / "a.pcap"
    wire.write_pcap(pcap, bytes(100), vpi=0, vci=32)
    side = cells.sidecar_path(pcap)
    side.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["cells", str(pcap)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a capture description (nested too deeply)" in err
    hostile = {"cell_time_ps": 2_726_000, "phy": "oc3c\x07", "link": "\x1b]0;owned\x07\x1b[2J"}
    side.write_text(json.dumps(hostile))
    assert main(["cells", str(pcap)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;owned\\x07\\x1b[2J" in out and "oc3c\\x07" in out


@pytest.mark.parametrize("option", ["experiment", "--testbed"])
@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_an_experiment_or_testbed_file_that_is_not_regular_is_one_line(tmp_path, option, kind):
    target = tmp_path / "x"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    argv = (
        ["run", str(target)]
        if option == "experiment"
        else ["run", str(EXAMPLES / "lan-buffers.netspec"), "--testbed", str(target)]
    )
    [(status, err)] = guarded(argv, cwd=tmp_path)
    what = "the experiment" if option == "experiment" else "the testbed"
    kind_words = "a FIFO" if kind == "fifo" else "a character device"
    assert f"{target}: {kind_words}, expected {what} in a regular file" in one_line(status, err)


def test_printable_escapes_control_characters_only():
    assert files.printable("µs ok") == "µs ok"
    assert files.printable("a\x1b[2Jb\r\x9b") == "a\\x1b[2Jb\\r\\x9b"


def test_show_escapes_what_a_result_json_says(stored, tmp_path, capsys):
    r = tmp_path / "r"
    subprocess.run(["cp", "-a", str(stored), str(r)], check=True)
    meta = json.loads((r / "result.json").read_text())
    meta["testbed"]["name"] = "x\x1b]0;owned\x07"
    (r / "result.json").write_text(json.dumps(meta))
    # As a result written so would be stored: its manifest covers result.json.
    manifest = json.loads((r / "manifest.json").read_text())
    manifest["result_json_sha256"] = results.layout._meta_digest(meta)
    (r / "manifest.json").write_text(json.dumps(manifest))
    assert main(["show", str(r)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "testbed x\\x1b]0;owned\\x07, cellbench" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["wire", "decode"], "line 1: more than 4096 characters, expected a cell (106 hex"),
        (["wire", "encode", "-", "--vpi", "0", "--vci", "32"],
         "stdin: more than 1048576 characters, expected the hex digits of a payload"),
    ],
)  # fmt: skip
def test_wire_reads_a_bounded_stdin(argv, message):
    """`wire decode < /dev/zero` read one endless line; `wire encode -` read stdin whole."""
    with open("/dev/zero", "rb") as zero:
        r = subprocess.run(
            [sys.executable, "-m", "cellbench", *argv],
            stdin=zero, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert r.returncode == 2 and r.stderr.startswith(f"cellbench: error: {message}")
    assert r.stderr.count("\n") == 1
