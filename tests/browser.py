"""A real browser for the tests: Debian's headless Chromium loads a page from disk
(file://, no server), runs its scripts, and hands back the DOM as they left it, the
console's messages and, if asked, a screenshot. scripts/test.sh installs chromium."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

#: A console message as Chromium logs it with --enable-logging=stderr --v=0.
_CONSOLE = re.compile(r':CONSOLE[^\]]*\] "(.*)", source: (.*)$')


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError("the browser tests need Chromium: install Debian's chromium (or run "
                         "scripts/test.sh as root, which does)")  # fmt: skip


def _run(page: Path, *flags: str) -> tuple[str, str]:
    with tempfile.TemporaryDirectory(prefix="cellbench-chromium-") as profile:
        p = subprocess.run(
            [chromium(), "--headless", "--disable-gpu", "--no-sandbox",
             f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
             *flags, page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    return p.stdout, p.stderr


def load(page: Path) -> tuple[str, list[str]]:
    """(the DOM after the page's scripts ran, the console's messages)."""
    dom, err = _run(page, "--dump-dom")
    return dom, console(err)


def screenshot(page: Path, png: Path, size: tuple[int, int] = (1400, 2200)) -> list[str]:
    """Save the rendered page as ``png``; the console's messages."""
    _, err = _run(page, f"--screenshot={png}", f"--window-size={size[0]},{size[1]}")
    assert png.is_file(), f"chromium wrote no screenshot: {err[-2000:]}"
    return console(err)


def console(stderr: str) -> list[str]:
    return [m.group(1) for line in stderr.splitlines() if (m := _CONSOLE.search(line))]


def rendered(page: Path) -> str:
    """The page's DOM after its scripts ran, checked for what every report has: no
    script error (console or the page's own error line) and its load handler run."""
    dom, messages = load(page)
    assert messages == [], messages
    assert 'data-ready="1"' in dom, "the page's load handler did not run"
    assert re.search(r'<p id="script-errors"></p>', dom), "a script error on the page"
    return dom


def table_rows(dom: str, cls: str) -> list[list[str]]:
    body = re.search(rf'<table class="sortable {cls}">.*?<tbody>(.*?)</tbody>', dom, re.S)
    assert body, f"no {cls} table"
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
        for tr in re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S)
    ]


def headers(dom: str, cls: str) -> list[str]:
    head = re.search(rf'<table class="sortable {cls}">.*?<thead>(.*?)</thead>', dom, re.S)
    return [html.unescape(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", head.group(1))]


def measure(page: Path, script: str, size: tuple[int, int] = (1400, 2200)) -> dict:
    """Run ``script`` (a JavaScript function body returning a JSON-able value) on a copy
    of ``page`` laid out in a ``size`` window, after it loaded; what it returned."""
    import json

    probe = page.with_name(page.stem + "-measured.html")
    hook = (
        "<script>window.addEventListener('load', function () {"
        "document.body.setAttribute('data-measured', JSON.stringify((function () {"
        f"{script}"
        "})()));});</script>"
    )
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", hook + "</body>"))
    dom, err = _run(probe, "--dump-dom", f"--window-size={size[0]},{size[1]}")
    m = re.search(r'data-measured="([^"]*)"', dom)
    assert m, f"the measuring script did not run: {console(err)}"
    return json.loads(html.unescape(m.group(1)))
