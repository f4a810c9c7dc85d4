"""`cellbench report` and `reproduce NAME --report`: the page, loaded from disk in a real
browser (headless Chromium, tests/browser.py), with its figures, tables and no script error."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser import headers, load, measure, rendered, screenshot, table_rows

from cellbench.data.published import lan_buffer_table
from cellbench.plots.report.highlight import highlight

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CELLBENCH = [sys.executable, "-m", "cellbench"]


def cellbench(*args: str, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        CELLBENCH + list(args), capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


@pytest.fixture(scope="module")
def lan(tmp_path_factory):
    """A small lan-buffers result (2 x 3 cells, 2 replications, with series) and its page,
    written by `reproduce --report` as the study runs."""
    tmp = tmp_path_factory.mktemp("report")
    r = cellbench(
        "reproduce", "lan-buffers", "--replications", "2",
        "--send-buffer", "16K", "--send-buffer", "32K",
        "--recv-buffer", "16K", "--recv-buffer", "24K", "--recv-buffer", "48K",
        "--out", "lb.result", "--series", "--report", "lb.html", cwd=tmp,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "cellbench: wrote lb.html (1 result(s)" in r.stderr
    return tmp


def test_lan_buffers_page_renders_with_published_column_and_figures(lan):
    dom = rendered(lan / "lb.html")
    cols = headers(dom, "summary")
    for col in ("snd", "rcv", "mean_mbit_ttcp", "published Mbit/s (2^20)", "error %",
                "limited_by", "limit_evidence"):  # fmt: skip
        assert col in cols
    rows = table_rows(dom, "summary")
    # Aggregated: one row per cell (6), not one per run (12).
    assert len(rows) == 6
    pub = lan_buffer_table()
    at = {(int(r[cols.index("snd")]), int(r[cols.index("rcv")])): r for r in rows}
    assert set(at) == {(s, r) for s in (16384, 32768) for r in (16384, 24576, 49152)}
    for (s, r), row in at.items():
        assert float(row[cols.index("published Mbit/s (2^20)")]) == pytest.approx(pub[(s, r)])
        assert row[cols.index("limited_by")] and len(row[cols.index("limit_evidence")]) > 20
    # 16K/24K is the study's lock-step: the simulator's row says so, with its evidence.
    assert at[(16384, 24576)][cols.index("limited_by")] == "lockstep"
    kinds = re.findall(r'<figure data-kind="([^"]+)"><svg', dom)
    assert kinds[:1] == ["buffer-grid"] and "cwnd" in kinds and "queue" in kinds
    # Not the window figure of one point per send buffer (--by snd --where rcv=48K).
    assert "window" not in kinds
    # The figure's text is text: the published comparison and the axes' units.
    assert "error per cell against the published grid" in dom
    assert "receiver SO_RCVBUF (bytes; K = 1024)" in dom
    assert '<span class="k">cluster</span>' in dom  # the experiment file, highlighted
    # The testbed as the run resolved it (the preset's values), beside the file.
    assert "<summary>testbed as run</summary>" in dom and '"buffer_cells": 256' in dom


def test_lan_buffers_page_screenshot_is_drawn_and_loads_fast(lan):
    from matplotlib.image import imread

    png = lan / "lb.png"
    assert screenshot(lan / "lb.html", png) == []
    pixels = imread(png)
    assert pixels.shape[:2] == (2200, 1400)
    ink = (pixels[..., :3].mean(axis=2) < 0.9).mean()
    assert ink > 0.05, f"only {ink:.1%} of the screenshot is drawn"
    dom, _ = load(lan / "lb.html")
    load_ms = int(re.search(r'data-load-ms="(\d+)"', dom).group(1))
    assert load_ms < 1000


#: What the legibility test reads in Chromium at 1400 px: the lead grid's numbers and
#: the buffer-grid figure's (their rendered heights), and whether any table is wider
#: than its box (a cut column) or any summary cell's text is clipped.
LEGIBILITY = """
var grid = document.querySelector("section.result table.lead-grid");
var first = document.querySelector("section.result table");
function heights(nodes) {
  return Array.prototype.map.call(nodes, function (n) { return n.getBoundingClientRect().height; });
}
var svgNumbers = Array.prototype.filter.call(
  document.querySelectorAll('figure[data-kind="buffer-grid"] svg text'),
  function (t) { return /^[0-9]+[.][0-9][*]?$/.test(t.textContent.trim()); });
var cut = Array.prototype.filter.call(document.querySelectorAll("table"),
  function (t) { return t.scrollWidth > t.clientWidth + 1; })
  .map(function (t) { return t.className; });
var clipped = Array.prototype.filter.call(document.querySelectorAll("table.summary td"),
  function (c) { return c.scrollWidth > c.clientWidth + 1; }).length;
var lock = Array.prototype.map.call(document.querySelectorAll(".lead-grid td.lockstep"),
  function (c) { return [c.parentNode.cells[0].textContent,
                         grid.tHead.rows[0].cells[c.cellIndex].textContent]; });
var errors = Array.prototype.map.call(document.querySelectorAll(".lead-grid td[data-error]"),
  function (c) { return [parseFloat(c.getAttribute("data-error")),
                         getComputedStyle(c).backgroundColor]; });
return {first: first && first.className, grid: grid ? grid.getBoundingClientRect().width : 0,
        page: document.documentElement.clientWidth,
        sim: heights(document.querySelectorAll(".lead-grid .sim")),
        svg: heights(svgNumbers), cut: cut, clipped: clipped, lock: lock, errors: errors};
"""


def test_lan_buffers_page_leads_with_a_grid_legible_at_1400_px(lan):
    """The section opens on the grid a reader came for: simulated over published per
    cell, the error coloured, lock-steps marked; its numbers and the figure's are a
    readable size at 1400 px, and no table is wider than the page."""
    m = measure(lan / "lb.html", LEGIBILITY, size=(1400, 2200))
    assert m["first"] == "lead-grid"
    assert 0 < m["grid"] <= m["page"]
    assert len(m["sim"]) == 6 and min(m["sim"]) >= 16, m["sim"]  # 17 px type
    # The figure's cell numbers: 6 per panel; at least 10 px high (today's 5.4 px is not read).
    assert len(m["svg"]) >= 6 and min(m["svg"]) >= 10, m["svg"]
    assert m["cut"] == [] and m["clipped"] == 0, m
    assert ["16K", "24K"] in m["lock"]  # the study's lock-step cell
    # Coloured by the error: the cell farthest off is the most coloured, red above.
    worst_error, colour = max(m["errors"], key=lambda e: abs(e[0]))
    rgb = [int(x) for x in re.findall(r"\d+", colour)[:3]]
    assert rgb != [255, 255, 255] and (rgb[0] > rgb[2]) == (worst_error > 0), m["errors"]


def test_a_header_click_sorts_the_table(lan, tmp_path):
    page = tmp_path / "sort.html"
    click = """<script>
    window.addEventListener("load", function () {
      var th = Array.prototype.find.call(document.querySelectorAll("table.summary th"),
                                         function (h) { return h.textContent === "mean_mbps"; });
      th.click();
      var col = Array.prototype.indexOf.call(th.parentNode.children, th);
      var up = Array.prototype.map.call(document.querySelectorAll("table.summary tbody tr"),
                                        function (r) { return r.cells[col].textContent; });
      th.click();
      var down = Array.prototype.map.call(document.querySelectorAll("table.summary tbody tr"),
                                          function (r) { return r.cells[col].textContent; });
      document.body.setAttribute("data-up", up.join(" "));
      document.body.setAttribute("data-down", down.join(" "));
    });
    </script>"""
    page.write_text((lan / "lb.html").read_text().replace("</body>", click + "</body>"))
    dom = rendered(page)
    up = [float(x) for x in re.search(r'data-up="([^"]*)"', dom).group(1).split()]
    down = [float(x) for x in re.search(r'data-down="([^"]*)"', dom).group(1).split()]
    assert len(up) == 6 and up == sorted(up) and down == sorted(up, reverse=True)


def test_report_command_on_a_stored_result_and_its_errors(lan):
    r = cellbench("report", "lb.result", "-o", "again.html", cwd=lan)
    assert r.returncode == 0, r.stderr
    assert 'data-kind="buffer-grid"' in (lan / "again.html").read_text()
    bad = cellbench("report", "lb.result", "-o", "page.png", cwd=lan)
    assert bad.returncode == 2
    assert bad.stderr == "cellbench: error: -o page.png: expected an .html file name\n"
    missing = cellbench("report", "nothing.result", "-o", "x.html", cwd=lan)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert "nothing.result: no such result" in missing.stderr
    # Every part stores its results: cases 1 and 2, case 3's two runs, Experiments 5, 6.
    cases = cellbench("reproduce", "wan-mismatch", "--part", "cases", "--report", "x.html", cwd=lan)
    assert cases.returncode == 0 and "wrote x.html (2 result(s)" in cases.stderr
    stored = cellbench("reproduce", "wan-mismatch", "--part", "segment-size", "--report",
                       "wm.html", cwd=lan)  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    assert 'data-kind="segment-size"' in (lan / "wm.html").read_text()


def test_wan_window_page_has_the_published_column_and_points(tmp_path):
    r = cellbench(
        "reproduce", "wan-window", "--report", "ww.html", cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    dom = rendered(tmp_path / "ww.html")
    cols = headers(dom, "summary")
    assert "published Mb/s" in cols
    rows = {int(row[cols.index("window")]): row for row in table_rows(dom, "summary")}
    assert float(rows[65536][cols.index("published Mb/s")]) == pytest.approx(59.6)
    assert "published (the study" in dom  # the figure's published points
    # Stored in a temporary directory and gone: the page names no path.
    assert "cellbench-reproduce-" not in dom
    assert not any(p.name.startswith("cellbench-reproduce-") for p in tmp_path.iterdir())


def test_highlight_keeps_the_text_and_marks_its_tokens():
    text = (
        "# a <comment> & more\ntestbed lan-buffers { host a { spacing_us = 16.01; } }\n"
        'cluster { test t { type = full (blocksize=8K, nbytes=$n); own = a:5001; x = "s"; } }\n'
        "sweep { n = [1M, 2M]; } ~\n"
    )
    out = highlight(text)
    assert html.unescape(re.sub(r"<[^>]+>", "", out)) == text
    assert '<span class="c"># a &lt;comment&gt; &amp; more</span>' in out
    for kind in ("testbed", "host", "cluster", "test", "sweep"):
        assert f'<span class="k">{kind}</span>' in out
    assert '<span class="a">spacing_us</span>' in out and '<span class="a">type</span>' in out
    assert '<span class="n">16.01</span>' in out and '<span class="n">8K</span>' in out
    assert '<span class="v">$n</span>' in out and '<span class="s">"s"</span>' in out
    # A word used as a setting's name is a setting even if it names a block kind.
    assert '<span class="a">test</span>' in highlight("x { test = 1; }")


EMU = pytest.mark.skipif(
    sys.platform != "linux" or os.geteuid() != 0 or not os.path.exists("/dev/net/tun"),
    reason="the emulator needs Linux, root and /dev/net/tun",
)


@EMU
@pytest.mark.system  # emulated runs: namespaces; run after the parallel run (conftest.py)
def test_one_experiment_on_sim_and_emu_side_by_side(tmp_path):
    f = EXAMPLES / "emu-wan.netspec"
    short = ["--set", "t.type.nbytes=2M"]
    for engine in ("sim", "emu"):
        r = cellbench("run", str(f), *short, "--engine", engine, "--series",
                      "--out", f"{engine}.result", cwd=tmp_path)  # fmt: skip
        assert r.returncode == 0, r.stderr
    r = cellbench("report", "sim.result", "emu.result", "-o", "both.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    dom = rendered(tmp_path / "both.html")
    assert re.findall(r'<section class="result" data-engine="(\w+)"', dom) == ["sim", "emu"]
    cols = headers(dom, "compare")
    assert {"sim: sim.result Mb/s", "emu: emu.result Mb/s"} <= set(cols)
    rows = table_rows(dom, "compare")
    assert len(rows) == 1 and rows[0][cols.index("test")] == "t"
    assert float(rows[0][cols.index("emu: emu.result Mb/s")]) > 1
    assert "worst p99 lateness µs" in dom  # the emulator's timing, per point
    # Each engine's cwnd figure (the emulator's from TCP_INFO).
    assert len(re.findall(r'<figure data-kind="cwnd"><svg', dom)) == 2


def test_a_large_experiment_file_is_shown_plain_at_its_size():
    """Highlighting spends a span per token (~9x the text): a file past
    HIGHLIGHT_MAX_CHARS is shown as plain text, the page's part the size of the file."""
    from cellbench.plots.report.highlight import HIGHLIGHT_MAX_CHARS, experiment_file

    line = "cluster { test t { type = full (blocksize=8K, nbytes=1M); own = a:1; } }\n"
    big = line * (1_000_000 // len(line))
    shown = experiment_file(big)
    assert len(shown) < 1.1 * len(big) and "shown without highlighting" in shown
    assert html.unescape(re.sub(r"<[^>]+>", "", shown)).endswith(big)
    small = line * (HIGHLIGHT_MAX_CHARS // len(line))
    assert '<span class="k">cluster</span>' in experiment_file(small)


def test_a_page_of_many_runs_holds_its_rows_about_once(lan):
    """`report` of a 100k-run result peaked at 588 MB for an 11 KB page: the page and
    each figure took a copy of every row. 24,000 rows (the lan result 2000 times over,
    ~30 MB): the page's peak allocation stays under twice the rows' (one copy, as a
    figure adds its throughput column, and matplotlib's own), where it was three times."""
    import tracemalloc

    import pandas as pd

    from cellbench.experiment import results
    from cellbench.plots.report.page import page

    stored = results.load(lan / "lb.result")
    rows = stored.to_pandas()
    step = int(rows["run"].max()) + 1
    many = pd.concat([rows.assign(run=rows["run"] + k * step) for k in range(2000)],
                     ignore_index=True)  # fmt: skip
    size = many.memory_usage(deep=True).sum()
    big = results.Result(dict(stored.meta), many, None)
    del rows, many
    tracemalloc.start()
    try:
        text = page([big])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "lead-grid" in text and len(text) < 200_000
    assert peak < 2.0 * size, (peak / 1e6, size / 1e6)


@pytest.fixture(scope="module")
def load_result(tmp_path_factory):
    """A small offered-load result (three loads, six connections a run)."""
    out = tmp_path_factory.mktemp("load") / "load.result"
    r = cellbench("run", str(EXAMPLES / "offered-load.netspec"), "--set", "period=20000,4000,1000",
                  "--replications", "1", "--out", str(out), cwd=out.parent)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("which", ["lan", "load_result"])
def test_the_page_reads_the_columns_it_shows_and_no_others(request, monkeypatch, which):
    """The page read every column of every row (~1.2 KB a run: 482 MB for 10^5 runs,
    test_bounds) to show some thirty. Now it never reads the whole rows, only the
    columns its figures and tables name (and the summary and contention views their
    own), and the page is the one drawn from every column."""
    from cellbench.experiment import results
    from cellbench.experiment.results import contention
    from cellbench.experiment.results.result import SUMMARY_COLUMNS
    from cellbench.plots.pick import drawn_columns
    from cellbench.plots.report.page import page
    from cellbench.plots.report.tables import TABLE_COLUMNS

    where = request.getfixturevalue(which)
    path = where / "lb.result" if which == "lan" else where
    every = results.load(path)
    whole = results.Result(every.meta, every.to_pandas(), every.path, every._tables)
    stored = results.load(path)
    read: set[str] = set()
    column_reader = stored._column_reader

    def recorded(table, names):
        if table == "runs":
            read.update(names)
        return column_reader(table, names)

    def whole_rows():
        raise AssertionError("the page read every column of the rows")

    monkeypatch.setattr(stored, "_column_reader", recorded)
    monkeypatch.setattr(stored, "_rows_or_reader", whole_rows)
    shown = page([stored])
    assert shown == page([whole])
    named = {*drawn_columns(stored, TABLE_COLUMNS), *contention.CONNECTION_COLUMNS,
             *contention.RUN_COLUMNS, *SUMMARY_COLUMNS}  # fmt: skip
    assert read and read <= named, sorted(read - named)
    assert "limit_evidence" not in read  # (the summary's own, thinned, read apart)


def test_ctrl_c_under_report_without_out_offers_no_resume(monkeypatch, tmp_path, capsys):
    from cellbench.cli import main
    from cellbench.reproduce import study

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(study, "run_parts", interrupted)
    assert main(["reproduce", "wan-window", "--report", str(tmp_path / "w.html")]) == 130
    err = capsys.readouterr().err
    assert err == (
        "cellbench: interrupted; no page written (--out DIR keeps a result to finish with "
        "--resume)\n"
    )
    assert not (tmp_path / "w.html").exists()


def test_a_study_with_three_parameters_gets_figures_with_a_pick(tmp_path):
    """europe-vp sweeps spacing, window and write size: each line figure draws a line
    per spacing at the largest value of the third parameter, and its caption says so."""
    r = cellbench("reproduce", "europe-vp", "--report", "evp.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    dom = rendered(tmp_path / "evp.html")
    captions = re.findall(r"<figcaption>([^<]*)</figcaption>", dom)
    assert "cellbench plot --kind window --by spacing_us --where write_size=65536" in captions
    assert "cellbench plot --kind message-size --by spacing_us --where window=49152" in captions
    assert "spacing_us=16.01" in dom and "spacing_us=off" in dom  # the legend, as text


def test_results_whose_folders_share_a_name_get_columns_of_their_own(tmp_path):
    """`report A/base B/base` (and `reproduce wan-contention --report`, whose parts were
    named by their experiment alone) failed: "columns overlap but no suffix specified"."""
    from cellbench.experiment import results
    from cellbench.plots.report.page import labels

    small = ["--set", "snd=16K", "--set", "rcv=16K,24K", "--set", "nbytes=64K"]
    for where in ("A", "B"):
        r = cellbench("run", str(EXAMPLES / "lan-buffers.netspec"), *small,
                      "--replications", "2", "--out", f"{where}/base", cwd=tmp_path)  # fmt: skip
        assert r.returncode == 0, r.stderr
    r = cellbench("report", "A/base", "B/base", "-o", "two.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "two.html").read_text()
    assert re.findall(r"<h3>([^<]*)</h3>", page) == ["sim: A/base", "sim: B/base"]
    assert "<th>sim: A/base Mb/s</th>" in page and "<th>sim: B/base Mb/s</th>" in page
    # A study's parts (no path: a temporary directory) by their label; one place twice
    # and results without a name, numbered.
    a, a2 = results.load(tmp_path / "A" / "base"), results.load(tmp_path / "A" / "base")
    assert labels([a, a2]) == ["sim: base #1", "sim: base #2"]
    for r, label in ((a, "study/burst"), (a2, "study/ftp")):
        r.path, r.label = None, label
    assert labels([a, a2]) == ["sim: study/burst", "sim: study/ftp"]
    a.label = a2.label = None
    assert labels([a, a2]) == ["sim: lan-buffers #1", "sim: lan-buffers #2"]


def test_reproduce_report_of_a_study_whose_parts_share_an_experiment(tmp_path):
    """`reproduce wan-contention --report` failed: its parts (a temporary directory, no
    path to show) were named by their experiment alone, the same for both."""
    r = cellbench("reproduce", "wan-contention", "--part", "credits", "--report", "wc.html",
                  cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "wc.html").read_text()
    assert re.findall(r"<h3>([^<]*)</h3>", page) == [
        "sim: wan-contention/credits/credit", "sim: wan-contention/credits/none"
    ]  # fmt: skip
