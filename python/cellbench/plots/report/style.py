"""The page's style sheet, its script (sorting a table by a column; what the browser
test reads: any script error and the load time) and its HTML template."""

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;
 max-width:110em;padding:0 1.5em 3em;color:#1d1d1f;background:#fff}
h1{font-size:1.5em;margin:.8em 0 .2em}h2{font-size:1.3em;border-bottom:2px solid #ccd;
 margin-top:2em}h3{font-size:1.1em;margin:.4em 0}
.note{color:#555;font-size:.92em;margin:.3em 0}
.side-by-side{display:grid;grid-template-columns:repeat(auto-fit,minmax(38em,1fr));gap:1.5em}
.result{min-width:0}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em;font-size:.92em;
 margin:.4em 0}
dl.meta dt{color:#555}dl.meta dd{margin:0;overflow-wrap:anywhere}
pre.testbed{font:11.5px/1.3 ui-monospace,monospace;max-height:20em;overflow:auto}
pre.netspec{background:#f6f7f9;border:1px solid #e1e3e8;padding:.8em;overflow:auto;
 font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;max-height:20em}
.netspec .k{color:#7c2d9e;font-weight:600}.netspec .a{color:#0b5cad}.netspec .n{color:#b35c00}
.netspec .s{color:#1a7f37}.netspec .v{color:#a3114f}.netspec .c{color:#6e7781;font-style:italic}
.netspec .p{color:#57606a}
table{border-collapse:collapse;font-size:12.5px;margin:.6em 0;display:block;overflow:auto;
 max-height:40em;max-width:100%}
table.summary{display:table;width:100%;max-height:none}
table.summary th{white-space:normal}
table.lead-grid{display:table;width:100%;font-size:13px;max-height:none;table-layout:fixed}
.lead-grid caption{font-size:13px;color:#333;padding:.3em 0 .5em}
.lead-grid th{background:#eef0f4;position:static;cursor:default;text-align:center;
 vertical-align:middle}
.lead-grid th.corner{font-size:11px;white-space:normal}
.lead-grid td.cell{text-align:center;vertical-align:middle;padding:.35em .2em;line-height:1.25}
.lead-grid .sim{display:block;font-size:17px}
.lead-grid .pub{display:block;color:#444;font-size:13px}
.lead-grid .err{display:block;font-size:13px;font-variant-numeric:tabular-nums}
.lead-grid td.lockstep{outline:2px dashed #222;outline-offset:-3px}
.lead-grid .lock{display:block;font-size:11px;font-weight:600;letter-spacing:.02em}
caption{caption-side:top;text-align:left;color:#555;padding:.2em 0}
th,td{border:1px solid #dde;padding:.2em .45em;vertical-align:top}
th{background:#eef0f4;position:sticky;top:0;cursor:pointer;white-space:nowrap}
th.asc::after{content:" ▲"}th.desc::after{content:" ▼"}
td.prose{min-width:14em;white-space:normal;overflow-wrap:anywhere}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tbody tr:nth-child(even){background:#fafbfc}
figure{margin:1em 0}svg.figure{width:100%;height:auto;max-width:60em;display:block;overflow:visible}
figure[data-kind="buffer-grid"] svg.figure{max-width:none}
figcaption{font:12px ui-monospace,monospace;color:#555}
#script-errors{color:#b00;white-space:pre-wrap}
"""


#: Sorting by a column (numbers by value, text alphabetically; again: the other way),
#: and what the browser test reads: any script error, and the page's load time.
SCRIPT = """
"use strict";
window.addEventListener("error", function (e) {
  var p = document.getElementById("script-errors");
  if (p) p.textContent += "script error: " + e.message + "\\n";
});
function sortBy(th) {
  var table = th.closest("table"), body = table.tBodies[0];
  var col = Array.prototype.indexOf.call(th.parentNode.children, th);
  var dir = th.classList.contains("asc") ? -1 : 1;
  table.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
  th.classList.add(dir > 0 ? "asc" : "desc");
  var rows = Array.prototype.slice.call(body.rows);
  function key(r) {
    var c = r.cells[col], s = c.getAttribute("data-sort");
    return s === null ? c.textContent : (s === "" ? NaN : parseFloat(s));
  }
  rows.sort(function (a, b) {
    var x = key(a), y = key(b);
    if (typeof x === "number" && typeof y === "number") {
      if (isNaN(x)) return 1; if (isNaN(y)) return -1;
      return dir * (x - y);
    }
    return dir * String(x).localeCompare(String(y), undefined, {numeric: true});
  });
  rows.forEach(function (r) { body.appendChild(r); });
}
document.addEventListener("click", function (e) {
  var th = e.target.closest("table.sortable th");
  if (th) sortBy(th);
});
window.addEventListener("load", function () {
  document.body.setAttribute("data-load-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-ready", "1");
});
"""


TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="cellbench {version}">
<title>{title}</title><style>{style}</style></head>
<body><h1>{title}</h1>
<p class="note">Written by cellbench {version} from stored results; nothing here was re-run.
Rates in Mb/s are 10^6 bit/s; ttcp's Mbit/s are 2^20 bit/s.</p>
<p id="script-errors"></p>
{body}
<script>{script}</script></body></html>
"""
