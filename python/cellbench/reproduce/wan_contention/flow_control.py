"""wan-contention's flow-control part (c'): the credits part's streams under UBR (tail
drop, EPD), credits, ABR with EFCI marking and ABR with ERICA's explicit rate
(``sim::net::abr``), with Jain's fairness index of the two streams (issue 29)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cellbench.experiment.results.contention import jain_index as jain_fairness
from cellbench.reproduce import study
from cellbench.reproduce.study import Ran, Run
from cellbench.reproduce.wan_contention.common import carried_bps, experiment, mbps, part
from cellbench.reproduce.wan_contention.credits import (
    CREDIT_SITES,
    credits_rows,
    hop_credits,
    protocol_name,
)

if TYPE_CHECKING:
    import pandas as pd


#: The flow-control part's schemes: UBR with tail drop and with EPD, credits, and ABR
#: with EFCI marking and with ERICA's explicit rate (issue 29). ABR sources start at
#: ICR = 10 Mb/s of cells (an assumption: TM 4.0's default ICR = PCR would start a
#: WAN source at the line rate); the EFCI threshold is half the 256-cell buffer, ERICA
#: targets 0.9 over 1 ms (assumptions, docs/mechanisms.md "ABR").
FLOW_SCHEMES = ("ubr-tail", "ubr-epd", "credit", "abr-efci", "abr-er")


#: Every ABR source's initial cell rate (the assumption above), in the language's words.
ABR_ICR = "10M"
#: The switch behaviours of the two ABR schemes (every port of every switch).
_ABR_SWITCH = {
    "abr-efci": "efci (threshold = 128)",
    "abr-er": "erica (target = 0.9, interval_us = 1000)",
}


def scheme_sets(scheme: str, credits: int, abr_source: dict[str, str]) -> dict[str, object]:
    """The --set values that put an experiment under ``scheme``: ``credits`` per VC per
    hop for credits, ``abr_source`` (the settings that make its sources ABR circuits)
    for the ABR schemes; UBR with tail drop is the testbed as it is."""
    if scheme == "ubr-tail":
        return {}
    if scheme == "ubr-epd":
        return {"testbed.switch.policy": "epd"}
    if scheme == "credit":
        return {"testbed.switch.flow_control": "credit", "testbed.switch.credits": credits}
    return {**abr_source, "testbed.switch.abr": _ABR_SWITCH[scheme]}


def schemes() -> dict[str, tuple[str, ...]]:
    """Each scheme's --set values of the flow-control file (the simulator's runs and the
    emulator's alike)."""
    from cellbench.experiment import testbed as tbmod

    n = hop_credits(tbmod.preset("wan-contention").to_dict(), CREDIT_SITES)
    # The file's $service: both streams' data circuits ABR, PCR the adapter's rate.
    abr = {"service": f"abr (icr = {ABR_ICR})"}
    return {s: study.sets(scheme_sets(s, n, abr)) for s in FLOW_SCHEMES}


def _flow_control_runs(o: study.Options) -> list[Run]:
    """The credits part's streams under each scheme (OUT/flow-control/SCHEME)."""
    return [
        Run(experiment("flow-control"), where=f"flow-control/{s}", sets=sets)
        for s, sets in schemes().items()
    ]


def flow_control_rows(ran: list[Ran]) -> list[dict]:
    """The credits part's row per stream, with its scheme and the ABR figures."""
    rows = []
    for r, scheme in zip(ran, FLOW_SCHEMES):
        for row in credits_rows([r.result]):
            row.update(part="flow-control", scheme=scheme)
            rows.append(row)
    return rows


#: Under the emulated table (``--engine emu``). The five pairs' figures are not
#: emulated: under credits and ABR they ran 38-48 ms late (p99) on the project's
#: 2-core machine (docs/wan-contention.md, "Flow control with Linux TCP").
EMU_NOTE = (
    "schemes as the simulator's part (ABR sources from ICR 10 Mb/s); fairness: Jain's "
    "index of the case's two streams; UDP Mb/s: datagrams that arrived\n"
    "not emulated: the five pairs (flow-control-five-pairs), whose credits and ABR runs "
    "do not keep real time on a 2-core machine (docs/wan-contention.md)"
)


def emu_row(r: dict) -> dict:
    """A stored emulated row as the part's rows name its case (``Emulated.row``): the
    mix's protocols, the stream and its protocol, and what it carried (a UDP stream:
    the datagrams that arrived, as the simulator's rows count it)."""
    return {
        "local": protocol_name(r["local"]),
        "remote": protocol_name(r["remote"]),
        "stream": r["test"],
        "protocol": r["protocol"],
        "throughput_bps": carried_bps(r),
    }


def flow_control_table(df: pd.DataFrame) -> str:
    import pandas as pd

    out = []
    for (_mix, local, remote), g in df.groupby(["mix", "local", "remote"], sort=False):
        for scheme in FLOW_SCHEMES:
            s = g[g.scheme == scheme]
            by = {r.stream: r for r in s.itertuples()}
            lo, re_ = by.get("local"), by.get("remote")
            if lo is None or re_ is None:
                continue
            out.append(
                {
                    "local/remote": f"{local}/{remote}",
                    "scheme": scheme,
                    "local Mb/s": mbps(lo.throughput_bps),
                    "remote Mb/s": mbps(re_.throughput_bps),
                    "fairness": f"{jain_fairness([lo.throughput_bps, re_.throughput_bps]):.2f}",
                    "cells lost": int(lo.cells_lost + re_.cells_lost),
                    "limited by (local; remote)": f"{lo.limited_by}; {re_.limited_by}",
                }
            )
    return pd.DataFrame(out).to_string(index=False)


PART = part(
    "flow-control",
    "(c') the credits part's streams under UBR, EPD, credits, ABR EFCI and ABR ER",
    _flow_control_runs,
    lambda o, ran: {"rows": flow_control_rows(ran)},
)
