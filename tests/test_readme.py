"""README's examples, run as a user would run them, compared with what README shows.

Every ```sh block in README.md whose lines start with `$ ` is an example: each command
runs with bash in a scratch directory (with the repository's examples/ beside it), and
its output (stdout and stderr in one stream, as a terminal shows them) must match the lines
README prints under it. Two elisions are allowed, as README uses them: a line that is
exactly `...` stands for any number of lines, and `...` inside a line for any text.
A block is left out only when the line before its fence says `<!-- readme-test: skip
(reason) -->`. So a change that moves a printed figure must update README in the same
commit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


@dataclass
class Command:
    line: int  # README line of the `$ ` prompt
    text: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    line: int  # README line of the opening fence
    commands: list[Command]
    preamble: list[str]  # variables set by earlier blocks


ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")


def readme_blocks(text: str) -> list[Block]:
    """The ```sh blocks of README that hold `$ ` prompts, with their expected output.
    A shell variable set in one block (`P=...`) is set again before each later block."""
    blocks: list[Block] = []
    assignments: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```sh":
            i += 1
            continue
        start = i
        skip = i > 0 and "readme-test: skip" in lines[i - 1]
        i += 1
        commands: list[Command] = []
        while i < len(lines) and lines[i].strip() != "```":
            ln = lines[i]
            if ln.startswith("$ "):
                commands.append(Command(i + 1, ln[2:]))
            elif commands:
                commands[-1].expected.append(ln)
            i += 1
        i += 1
        if commands and not skip:
            blocks.append(Block(start + 1, commands, list(assignments)))
        assignments += [c.text for c in commands if ASSIGNMENT.match(c.text)]
    return blocks


def _line_matches(pattern: str, got: str) -> bool:
    if "..." not in pattern:
        return pattern == got
    parts = [re.escape(p) for p in pattern.split("...")]
    return re.fullmatch(".*".join(parts), got, flags=re.DOTALL) is not None


def output_matches(expected: list[str], got: list[str]) -> bool:
    """Match line by line; an `...` line matches any run of lines (backtracking)."""

    def match(e: int, g: int) -> bool:
        if e == len(expected):
            return g == len(got)
        if expected[e].strip() == "...":
            return any(match(e + 1, k) for k in range(g, len(got) + 1))
        return g < len(got) and _line_matches(expected[e], got[g]) and match(e + 1, g + 1)

    return match(0, 0)


def _cellbench_dir() -> str:
    exe = shutil.which("cellbench")
    if exe:
        return str(Path(exe).parent)
    # Installed scripts live beside the interpreter.
    return str(Path(sys.executable).parent)


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def test_readme_has_examples() -> None:
    # The parser itself: README's examples must be found (a renamed fence would hide them).
    assert sum(len(b.commands) for b in BLOCKS) >= 15


MARK = "@@readme-test@@"
ROOT_WARNING = 'Running as user "root" and group "root". This could be dangerous.'
#: A progress line (cellbench.progress.progress_bar, off a terminal: one every few seconds
#: of a long run, so how many depends on the machine's speed); README leaves the
#: progress out, as it leaves out the bar a terminal shows.
PROGRESS = re.compile(r"cellbench [a-z]+( [a-z0-9-]+)?( \((emu|real|checking points)\))?: +\d+%\|")


def run_block(block: Block, cwd: Path) -> list[tuple[int, list[str]]]:
    """Run a block's commands in one shell (so `P=...` reaches the next line); for each,
    its exit status and output lines (stdout and stderr in one stream, as a terminal
    shows them)."""
    script = "".join(f"{a}\n" for a in block.preamble)
    script += "".join(f"{c.text}\necho; echo {MARK} $?\n" for c in block.commands)
    env = dict(os.environ)
    env["PATH"] = _cellbench_dir() + os.pathsep + env.get("PATH", "")
    p = subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
        check=False,
    )
    results: list[tuple[int, list[str]]] = []
    lines: list[str] = []
    for ln in p.stdout.splitlines():
        if ln.startswith(ROOT_WARNING):
            continue  # tshark's note when CI runs it as root; a user's terminal has none
        if PROGRESS.match(ln):
            continue
        if ln.startswith(MARK):
            # The `echo` before the mark ends a last line that had no newline.
            if lines and lines[-1] == "":
                lines.pop()
            results.append((int(ln.split()[1]), lines))
            lines = []
        else:
            lines.append(ln)
    return results


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One scratch directory for all blocks, in README's order: a result written by one
    example is read by the next, as a user following README would have it."""
    d = tmp_path_factory.mktemp("readme")
    (d / "examples").symlink_to(ROOT / "examples")
    return d


@pytest.mark.parametrize("block", BLOCKS, ids=[f"README.md:{b.line}" for b in BLOCKS])
def test_readme_example(block: Block, workdir: Path) -> None:
    results = run_block(block, workdir)
    assert len(results) == len(block.commands), "the block's shell stopped early"
    for cmd, (rc, got) in zip(block.commands, results):
        where = f"README.md:{cmd.line}: $ {cmd.text}"
        # Anything must succeed unless README shows it failing.
        if not any(ln.startswith("cellbench: error") for ln in cmd.expected):
            assert rc == 0, f"{where}\nexit {rc}\n" + "\n".join(got)
        assert output_matches(cmd.expected, got), (
            f"{where}\n--- README shows\n"
            + "\n".join(cmd.expected)
            + "\n--- got\n"
            + "\n".join(got)
        )


def test_output_matching_rules() -> None:
    assert output_matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert output_matches(["a", "...", "d"], ["a", "d"])
    assert not output_matches(["a", "d"], ["a", "b", "d"])
    assert output_matches(["x (...) y"], ["x (anything) y"])
    assert not output_matches(["x (...) y"], ["x (anything) z"])
    assert not output_matches(["a"], [])


def update_readme() -> None:
    """`python3 tests/test_readme.py --update`: rewrite the output of every README example
    whose shown output has no `...` elision with what it prints now (elided ones are listed
    for a hand edit). Review the diff: a moved figure should be a change you meant."""
    import tempfile

    lines = README.read_text(encoding="utf-8").splitlines()
    edits: list[tuple[int, int, list[str]]] = []  # (first line index, end index, new lines)
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "examples").symlink_to(ROOT / "examples")
        for block in BLOCKS:
            for cmd, (_rc, got) in zip(block.commands, run_block(block, Path(d))):
                if output_matches(cmd.expected, got):
                    continue
                if any("..." in ln for ln in cmd.expected):
                    print(
                        f"README.md:{cmd.line}: elided output differs, edit by hand: $ {cmd.text}"
                    )
                    continue
                edits.append((cmd.line, cmd.line + len(cmd.expected), got))
                print(f"README.md:{cmd.line}: updated: $ {cmd.text}")
    for first, end, new in reversed(edits):
        lines[first:end] = new
    README.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python3 tests/test_readme.py --update")
    update_readme()
