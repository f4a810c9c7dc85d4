"""Stored results as one self-contained HTML page (``cellbench report``; ``page.write``).

The page opens from disk in any browser, with no server and nothing fetched: the
experiment file as it ran (highlighted by the language's own lexer), each result's
summary per sweep point and connection (mean, min and max over the replications,
what bound it and the evidence in one sentence; the published value beside it where
the repository carries one, ``data.published``), the figures ``cellbench plot``
draws for it (the study's, with the published comparison, and one run's
time-sequence, cwnd and queue figures where stored), and the results of one
experiment from different engines (sim, emu, real) side by side.

Figures are matplotlib's SVG, inline: vectors stay sharp at any zoom, their text
stays text (searchable, and the browser test reads it), and matplotlib is already
what ``cellbench plot`` draws with, so a figure on the page is the figure the
command writes. An interactive plotting library would need its bundle (megabytes of
JavaScript) in every page to work offline. Tables sort on a click of their header
(a few lines of inline script). A result is aggregated (one row per sweep point and
connection), never dumped row by row, so the 5000-run lan-buffers result is a
100-row table and two figures.
"""
