"""The classic testbeds, runnable as reproductions (``cellbench reproduce NAME``).

``REGISTRY`` holds every study (``reproduce.study.Study``: its parts, their experiment
files, rows, tables and JSON); the command line is made from it.
"""

from __future__ import annotations

from cellbench.reproduce import hetero_lan, lan_buffers, ubr, wan, wan_contention, wan_mismatch
from cellbench.reproduce.study import Study

#: Every study, in the order ``cellbench reproduce --help`` lists them.
REGISTRY: dict[str, Study] = {
    s.name: s
    for s in (
        lan_buffers.STUDY,
        hetero_lan.STUDY,
        wan.WAN_WINDOW,
        wan_mismatch.WAN_MISMATCH,
        wan.EUROPE_VP,
        wan_contention.WAN_CONTENTION,
        ubr.UBR,
    )
}

#: name -> module with ``run(...)`` returning a DataFrame and ``report(df)`` for the CLI.
STUDIES = {"lan-buffers": lan_buffers, "hetero-lan": hetero_lan}


def reproduce_study(name: str, **options):
    """Run a classic study on the simulator; one row per configuration and replication.

    ``cellbench.reproduce_study("lan-buffers", replications=5, seed=1)`` returns a
    pandas DataFrame (throughput in ``throughput_mbit_ttcp``, 2^20 bit/s, and
    ``throughput_bps``); ``STUDIES[name].summarize(df)`` gives the grid.
    """
    try:
        study = STUDIES[name]
    except KeyError:
        raise ValueError(
            f"unknown study {name!r}: expected one of {', '.join(sorted(STUDIES))}"
        ) from None
    return study.run(**options)


__all__ = ["REGISTRY", "STUDIES", "hetero_lan", "lan_buffers", "reproduce_study"]
