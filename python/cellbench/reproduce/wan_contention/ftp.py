"""wan-contention's ftp part (e): NRL (Washington) to JPL (Pasadena) over DS-3 access
links: FTP with its default window, FTP with an extended window (its disk read at an
assumed 4 MB/s), and ttcp full blast (004's text)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cellbench.reproduce import study
from cellbench.reproduce.wan_contention.common import in_mbps, mbps, one, part, size, streams

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.results import Result


def ftp_rows(result: Result) -> list[dict]:
    """NRL -> JPL: FTP with its default window, FTP with an extended window, ttcp; the
    round trip from the distance (the testbed's trunks, both ways)."""
    rtt_ms = round(2 * sum(t["delay_ms"] for t in result.meta["testbed"]["trunks"]), 3)
    rows = []
    for r, where, limited, evidence in streams(result):
        rows.append(
            {
                "part": "ftp",
                "app": r["test"],
                "window": int(r["sndbuf"]),
                "disk_rate": float(r["disk"]) if r["test"].startswith("ftp") else None,
                "rtt_ms": rtt_ms,
                "transmitter": r["transmitter"],
                "receiver": r["receiver"],
                "replication": int(r["replication"]),
                "seed": int(r["seed"]),
                "throughput_bps": float(r["throughput_bps"]),
                "cells_lost": int(r["cells_lost"] or 0),
                "lost_at": where,
                "retransmitted_segments": int(r["retransmitted_segments"] or 0),
                "limited_by": limited,
                "limit_evidence": evidence,
            }
        )
    return rows


def ftp_report(df: pd.DataFrame) -> str:
    import pandas as pd

    show = pd.DataFrame(
        {
            "app": df.app,
            "window": df.window.map(size),
            "disk": df.disk_rate.map(lambda x: "-" if pd.isna(x) else size(x) + "/s"),
            "Mb/s": df.throughput_bps.map(mbps),
            "cells lost": df.cells_lost,
            "limited by": df.limited_by,
        }
    )
    rtt = float(df.rtt_ms.iloc[0])
    return "\n".join(
        [
            f"(e) file transfer across the United States, NRL (Washington) -> JPL "
            f"(Pasadena), each site on a DS-3, {rtt:g} ms round trip (3,700 km at 5 µs/km); "
            "ftp with its default window (4.3BSD's 4 KB), ftp with an extended (RFC 1323) "
            "window, ttcp full blast with it; the disk's 4 MB/s is an assumption",
            show.to_string(index=False),
            "limited by: window = window / RTT; application = the disk; link = the DS-3",
            "published (004's text): ttcp 23.8 Mb/s, ftp 2.88 Mb/s, ftp modified for "
            "extended windows 22.4 Mb/s (likely disk-limited); 004 gives no round trip for "
            "this path, and its window example implies near 60 ms coast to coast, not "
            f"{rtt:g} ms (docs/wan-contention.md)",
        ]
    )


def _ftp_figures(got: dict) -> dict[str, study.Simulated]:
    """004's NRL -> JPL figures: ttcp, unmodified FTP, FTP with extended windows."""
    by = {r["app"]: r for r in got["rows"]}

    def sim(app: str) -> study.Simulated:
        r = by[app]
        return study.Simulated(
            in_mbps(r["throughput_bps"]),
            detail=f"window {r['window']}, RTT {r['rtt_ms']:g} ms, limited by {r['limited_by']}",
        )

    rtt = by["ttcp"]["rtt_ms"]
    return {
        "004-s3-ttcp": sim("ttcp"),
        "004-s3-ftp": sim("ftp-default"),
        "004-s3-ftp-extended": sim("ftp-extended"),
        # The paper's own arithmetic (window / round trip) on the path's round trip.
        "004-s3-64k-9mbps": study.Simulated(
            65536 * 8 / (rtt * 1e-3) / 1e6, detail=f"64 KB / the path's {rtt:g} ms round trip"
        ),
    }


NRL_JPL_RTT = (
    "the ftp preset's round trip (37.4 ms: the 3,700 km great circle) is shorter than the "
    "one 004's own example implies (64 KB at about 9 Mb/s: near 58 ms); the backbone "
    "delay is an assumption whose range reaches it (--envelope)"
)


PART = part(
    "ftp",
    "(e) NRL to JPL: ftp and ttcp",
    one("ftp"),
    lambda o, ran: {"rows": ftp_rows(ran[0].result)},
    (("004-s3-64k-9mbps", "004-s3-ttcp", "004-s3-ftp", "004-s3-ftp-extended"), _ftp_figures),
    {"004-s3-64k-9mbps": NRL_JPL_RTT},
)
