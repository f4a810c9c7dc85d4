"""The figure kinds ``cellbench plot`` draws, one record each: its name, what it shows,
what data it fits (the check that refuses data it would misdraw, with its message)
and its draw function. The command line's ``--kind`` choices and help, ``draw.plot``
and the report page all read this one table.

The table imports no pandas, numpy or matplotlib, so that building the command line
stays light: a record names its functions (``"module:function"`` in this package),
imported when a figure is drawn."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: What a kind draws from.
SOURCES = {
    "sweep": "the rows of the runs --where picks, aggregated over the replications",
    "run": "one stored run's table (--run, else the first --where picks)",
    "capture": "a cell tester's capture (a result's cells/, or FILE.pcap)",
}


@dataclass(frozen=True)
class Kind:
    name: str
    #: What the figure shows, in one line (``cellbench plot --help``).
    shows: str
    #: What it draws from: a key of SOURCES.
    source: str
    #: The figure's draw function, ``draw(result, fig, request)``.
    draw: str
    #: source "sweep": the check that refuses rows the figure would misdraw (a
    #: PlotError saying what is missing or what varies besides) and returns the rows
    #: to draw, ``fit(rows, params, by)``; None: it draws any rows.
    fit: str | None = None
    #: source "run": the stored table it draws (a ``Result`` method), and the refusal
    #: when the result holds none.
    stored: str | None = None
    missing: str = ""
    #: What one value of ``--by`` draws ("line", "panel"); "" where --by draws nothing.
    by: str = ""
    #: What the figure draws one of ("run", "surface"), refusing --by; "" if it does not.
    one: str = ""
    #: Takes ``--compare published`` (the study's published values beside the simulated).
    compare: bool = False
    #: source "run": which of its samples it draws besides the run ("connection", "port").
    picks: tuple[str, ...] = ()
    #: The report page draws it where it fits (measurements needs cells picked by hand).
    on_page: bool = True

    def function(self, which: str):
        """The ``draw`` or ``fit`` function the record names."""
        module, _, name = getattr(self, which).partition(":")
        return getattr(importlib.import_module(f"cellbench.plots.{module}"), name)


_SERIES = "run it with --series"

KINDS = (
    Kind("buffer-grid", "mean ttcp throughput over send × receive buffer, a heat map "
         "(--compare published: lan-buffers' grid and the error per cell)",
         "sweep", "buffers:buffer_grid", "buffers:fit_grid", by="panel", compare=True),
    Kind("buffer-surface", "the same with its maximum marked; over socket buffer × message "
         "size where both ends' buffers are equal (hetero-lan)",
         "sweep", "buffers:surface", "buffers:fit_surface", one="surface"),
    Kind("window", "throughput against the TCP window (the smaller socket buffer)",
         "sweep", "lines:window", "lines:fit_window", by="line"),
    Kind("message-size", "throughput against the application's write size",
         "sweep", "lines:message_size", "lines:fit_message_size", by="line"),
    Kind("offered-load", "aggregate carried against offered load (constant-rate traffic)",
         "sweep", "load:offered_load", "load:fit_offered_load", by="line"),
    Kind("segment-size", "throughput against the TCP segment size, MTU - 40 (an MTU sweep)",
         "sweep", "lines:segment_size", "lines:fit_segment_size", by="line"),
    Kind("measurements", "each picked cell's throughput against measurement number",
         "sweep", "lines:measurements", "lines:fit_measurements", on_page=False),
    Kind("time-sequence", "a connection's segments, ACKs and receive window (--trace)",
         "run", "trace:time_sequence", stored="traces", one="run", picks=("connection",),
         missing="the result holds no trace: run it with --trace"),
    Kind("cwnd", "a connection's cwnd, ssthresh and data in flight over time (--series)",
         "run", "series:cwnd", stored="cwnd_series", one="run", picks=("connection",),
         missing=f"the result holds no cwnd series: {_SERIES}"),
    Kind("queue", "switch output ports' occupancy over time (--series)",
         "run", "series:queue", stored="queue_series", one="run", picks=("port",),
         missing=f"the result holds no queue series: {_SERIES}"),
    Kind("acr", "ABR circuits' allowed cell rates over time (--series)",
         "run", "series:acr", stored="acr_series", one="run", picks=("connection",),
         missing="the result holds no ACR series: run ABR circuits with --series"),
    Kind("iat", "a cell tester's capture: cells against their inter-arrival time",
         "capture", "capture:iat"),
    Kind("port-buffer", "throughput and wasted cells against the port buffer, a line per "
         "drop policy (reproduce ubr)",
         "sweep", "port:port_buffer", "port:fit_port_buffer"),
)  # fmt: skip

#: The kinds by name, in the table's order.
BY_NAME = {k.name: k for k in KINDS}
NAMES = tuple(BY_NAME)


def of(source: str) -> tuple[str, ...]:
    """The names of the kinds that draw from ``source``."""
    return tuple(k.name for k in KINDS if k.source == source)


def picking(what: str) -> str:
    """The kinds that draw the ``what`` (connection, port) an option picks, as its help
    names them."""
    return ", ".join(k.name for k in KINDS if what in k.picks)


def help_text(columns: int = 79) -> str:
    """The kinds as ``cellbench plot --help`` lists them: each name and what it shows."""
    import textwrap

    width = max(map(len, NAMES))
    hang = " " * (width + 4)
    return "figure kinds:\n" + "\n".join(
        textwrap.fill(k.shows, columns, initial_indent=f"  {k.name:<{width}}  ",
                      subsequent_indent=hang, break_on_hyphens=False)
        for k in KINDS
    )  # fmt: skip


@dataclass
class Request:
    """What one figure is asked to draw, as its draw function receives it."""

    #: The result's rows --where picked (and the kind's fit check shaped).
    rows: pd.DataFrame
    #: The --where picks, for the title.
    picked: dict
    #: The result's sweep parameters.
    params: list[str]
    by: str | None = None
    compare: str | None = None
    run: int | None = None
    connection: int | None = None
    port: int | None = None
    #: source "run": the kind's stored table (never empty).
    stored: pd.DataFrame | None = None
