"""Behaviour kept across the restructure (issue 23): every study part's rows
and every simulator example's stored rows hash as recorded in
scripts/row-hashes.baseline.json, over the columns and JSON keys recorded
there (a newly stored column is not a change; any changed value is).

When a study's numbers change on purpose, re-record the baseline with
`python3 scripts/row-hashes.py --save scripts/row-hashes.baseline.json` in the
same commit and say why in its message."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_study_and_example_hashes_as_recorded():
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "row-hashes.py"),
            "--check",
            str(ROOT / "scripts" / "row-hashes.baseline.json"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 changed" in done.stdout
