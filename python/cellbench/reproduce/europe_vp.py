"""``europe-vp`` (docs/europe-vp.md): a SPARCstation 10 on 155 Mb/s SDH, E3 into a
public network whose switch polices a 61,000 cell/s VP with GCRA(16.39 µs, 101 µs);
8 ms ping RTT; adapter cell spacing 19.45/17.98/16.50/16.01 µs or none.

Every parameter comes from the setup and the physical facts; nothing is tuned to a
published number. The ``vp`` part is an experiment file beside this module
(europe-vp.netspec), run by the experiment runner through the study registry
(``reproduce.study``), so it stores, resumes and runs on Dask as ``cellbench run``
does; its rows are one per connection per configuration and replication
(reproduce.wan_rows). The ``tester`` part is the cell tester's (reproduce.tester).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from cellbench.reproduce import study, tester, wan_rows
from cellbench.reproduce.study import Ran, Run
from cellbench.reproduce.tables import Command, DocsTable, mbps, table

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.results import Result

#: The study's sweep parameters, in the rows' order (named as the JSON rows name them).
PARAMS = ["spacing_us", "window", "write_size"]


def rows(result: Result) -> list[dict]:
    """The experiment's stored (or in-memory) result as the study's rows."""
    return wan_rows.sweep_rows(PARAMS, result)


# --- what the vp part compares with 002 (cellbench fidelity) -----------------------------

#: Why a line of 002 §2.4's arithmetic misses.
PAPER_ARITHMETIC = (
    "the paper's own equation with its own figures gives the simulated value; the "
    "printed figure is a slip of the text (or of its extraction)"
)


def _vp_figures(df: pd.DataFrame) -> dict[str, study.Simulated]:
    """002 §4: the spacings' best throughput at the largest window, their segment loss,
    and the unspaced collapse."""
    window = int(df.window.max())

    def at(spacing: float, w: int = window) -> pd.DataFrame:
        return df[(df.spacing_us == spacing) & (df.window == w)]

    def best(spacing: float, w: int = window) -> float:
        return float(at(spacing, w).throughput_bps.max()) / 1e6

    def loss(spacing: float, w: int | None = None) -> float:
        chosen = df[df.spacing_us == spacing] if w is None else at(spacing, w)
        return 100 * float(chosen.segment_loss_rate.max())

    unspaced = df[df.spacing_us.isna()]
    violated = int((~unspaced.met_contract.astype(bool)).sum())
    top = float(unspaced.throughput_bps.max()) / 1e6
    where = f"{window // 1024} KB window, best write size"
    near = abs(best(19.45) - best(16.50)) <= 0.1 * best(16.50)
    return {
        "002-s41-unspaced": study.Simulated(
            top,
            holds=top < 0.01 and violated == len(unspaced),
            detail=f"contract violated in {violated}/{len(unspaced)} configurations; "
            "no data: under 0.01 Mb/s",
        ),
        "002-s42-1945": study.Simulated(
            holds=best(19.45) >= max(best(19.45, int(w)) for w in set(df.window)),
            detail=f"{best(19.45):.2f} Mb/s at {where}",
        ),
        "002-s42-1945-loss": study.Simulated(loss(19.45), detail="worst configuration"),
        "002-s42-1798": study.Simulated(
            holds=abs(best(17.98) - best(19.45)) <= 0.1 * best(19.45),
            detail=f"{best(17.98):.2f} against {best(19.45):.2f} Mb/s (within 10%)",
        ),
        "002-s42-1650-loss": study.Simulated(loss(16.50), detail="worst configuration"),
        "002-s42-1650-19": study.Simulated(
            best(16.50), detail=f"{where}; 19.45 µs gives {best(19.45):.2f} (comparable: {near})"
        ),
        "002-s43-1601-collapse": study.Simulated(best(16.01), detail=where),
        "002-s43-1601-16k-loss": study.Simulated(loss(16.01, 16384), detail="worst write size"),
        "002-s43-1601-32k": study.Simulated(
            holds=loss(16.01, 32768) > loss(16.01, 16384),
            detail=f"worst segment loss {loss(16.01, 32768):.2f}% at 32 KB, "
            f"{loss(16.01, 16384):.2f}% at 16 KB",
        ),
    }


def _vp_calc() -> dict[str, dict]:
    """002 §2.4's equations with its own figures (`cellbench calc`)."""
    from cellbench import calc

    return {
        "switch": calc.buffer_burst(256, 2.726, 12.39),
        "upc": calc.gcra_burst(16.39, 101, 12.39),
        "upc-11000": calc.gcra_burst(1e6 / 11000, 101, 12.39),
        "upc-155": calc.gcra_burst(16.39, 101, 2.726),
    }


def _vp_calc_figures(got: dict[str, dict]) -> dict[str, study.Simulated]:
    sw = got["switch"]
    return {
        "002-s24-eq1-burst": study.Simulated(
            sw["max_burst_cells"], detail="256 / (1 - 2.726 / 12.39) = 328.2"
        ),
        "002-s24-eq1-idle": study.Simulated(sw["buffer_cells"] * sw["out_cell_us"]),
        "002-s24-eq2-burst": study.Simulated(got["upc"]["max_burst_cells"]),
        "002-s24-idle": study.Simulated(got["upc"]["idle_to_repeat_us"]),
        "002-s24-11000": study.Simulated(got["upc-11000"]["max_burst_cells"]),
        "002-s24-direct155": study.Simulated(
            got["upc-155"]["max_burst_cells"], detail="1 + 101 / (16.39 - 2.726) = 8.4"
        ),
    }


def _vp_runs(o: study.Options) -> list[Run]:
    # Only a change is a --set: the default run's result names the file's parameters alone.
    sets = ("testbed.host.sparc10-a.stall=0",) if o.params.get("stall") is False else ()
    # Beside the tester part, each in a directory of its own.
    return [Run("europe-vp", where="vp" if len(o.parts) > 1 else "", sets=sets)]


def _vp_collect(ran: list[Ran]) -> pd.DataFrame:
    return wan_rows.frame(rows(ran[0].result))


def _stall_option(p) -> None:
    p.add_argument(
        "--no-stall",
        dest="stall",
        action="store_false",
        help="without the adapter's 7-8-slot stall where a 1 KB cluster mbuf "
        "a PDU is gathered from ends (TCP from SunOS's 4 KB clusters meets few)",
    )


def _check_stall(o: study.Options) -> None:
    if o.params.get("stall") is False and "vp" not in o.parts:
        raise ValueError("--no-stall: for --part vp (--part tester runs its own adapters)")


def _europe_vp_json(o: study.Options, got: dict) -> dict:
    """vp alone: its rows; tester alone: the tester's document; both: the rows and the
    tester's document under ``tester``."""
    doc = tester.to_json(got["tester"]) if "tester" in got else None
    if "vp" not in got:
        return doc or {}
    return {"study": "europe-vp", "rows": wan_rows.records(got["vp"])} | (
        {"tester": doc} if doc is not None else {}
    )


# --- the tables of its page (docs/europe-vp.md; reproduce.tables) ------------------------


def _table_europe_vp(command: Command) -> str:
    d = command.json()
    groups: dict[tuple, list[dict]] = {}
    for r in d["rows"]:
        groups.setdefault((r["spacing_us"], r["window"]), []).append(r)
    writes = sorted({r["write_size"] for r in d["rows"]})
    lines = []
    for (spacing, window), rs in groups.items():
        rs = sorted(rs, key=lambda r: r["write_size"])
        limits = Counter(r["limited_by"] for r in rs)
        limit = ", ".join(f"{k} ({n})" if len(limits) > 1 else k for k, n in limits.items())
        if not all(r["met_contract"] for r in rs):
            limit += f"; contract violated ({sum(not r['met_contract'] for r in rs)})"
        lines.append([
            "none" if spacing is None else f"{spacing:.2f}", f"{window // 1024} KB",
            " / ".join(mbps(r["throughput_bps"], 2) for r in rs), limit,
        ])  # fmt: skip
    sizes = " / ".join(f"{w // 1024}K" for w in writes)
    return f"{command.source}; limited by: what bound each connection (count):\n\n" + table(
        ["spacing µs", "window", f"Mb/s (writes {sizes})", "limited by"], lines
    )


def _table_europe_vp_tester(command: Command) -> str:
    text = command.text()
    body = text[text.index("driver 2.2.9") :].rstrip("\n")
    return f"{command.source}, its report from the first driver on:\n\n```\n{body}\n```"


def _europe_vp() -> study.Study:
    return study.Study(
        "europe-vp",
        "two LANs joined by a policed 23.42 Mb/s VP: adapter cell spacing against UPC",
        (
            wan_rows.table_part(
                "europe-vp",
                "vp",
                "the policed VP's table",
                _vp_runs,
                _vp_collect,
                (
                    study.Compares(
                        (
                            "002-s41-unspaced",
                            "002-s42-1945",
                            "002-s42-1945-loss",
                            "002-s42-1798",
                            "002-s42-1650-loss",
                            "002-s42-1650-19",
                            "002-s43-1601-collapse",
                            "002-s43-1601-16k-loss",
                            "002-s43-1601-32k",
                        ),
                        _vp_figures,
                        what="every spacing, window and write size",
                    ),  # fmt: skip
                    study.Compares(
                        (
                            "002-s24-eq1-burst",
                            "002-s24-eq1-idle",
                            "002-s24-eq2-burst",
                            "002-s24-idle",
                            "002-s24-11000",
                            "002-s24-direct155",
                        ),
                        _vp_calc_figures,
                        compute=_vp_calc,
                        what="calc burst and gcra",
                        causes={
                            "002-s24-eq1-burst": PAPER_ARITHMETIC,
                            "002-s24-direct155": PAPER_ARITHMETIC,
                        },
                    ),  # fmt: skip
                ),
            ),
            tester.PART,
        ),
        default_parts=("vp",),
        options=_stall_option,
        params=lambda a: {} if a.stall else {"stall": False},
        check=_check_stall,
        to_json=_europe_vp_json,
        tables=(
            DocsTable("europe-vp", _table_europe_vp),
            DocsTable("europe-vp-tester", _table_europe_vp_tester, ("--part", "tester")),
        ),
        replications_help="runs per configuration (default 1)",
        # Every spacing against the UPC, at the study's largest window and 8 KB writes.
        emulated=study.Emulated(
            "europe-vp",
            {"spacing_us": "spacing_us", "window": "window", "write_size": "write_size"},
            _emu_options,
            reduced={"window": [49152], "write_size": [8192]},
            sim_transfer="16 MB",
            sim_part="vp",
            timed={"nbytes": "off", "sender.type.duration": 4},
            duration="sender.type.duration",
        ),
    )


def _emu_options(a) -> tuple[dict, list[str]]:
    """The emulated study's simulator options and --set values: its seed and the stall."""
    stall = [] if getattr(a, "stall", True) else ["testbed.host.sparc10-a.stall=0"]
    return {"seed": a.seed, "sets": stall}, stall


STUDY = _europe_vp()
