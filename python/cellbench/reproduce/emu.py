"""The studies on the emulator: ``cellbench reproduce NAME --engine emu``.

Each study's testbed and connections run with this machine's Linux TCP in network
namespaces over the simulator's cell network in real time (``cellbench.engines.emu``), beside
the simulator's result for the same cases, computed in the same call.

Real time costs what it costs: lan-buffers' 5000 transfers of 32 MB would take hours.
So an emulated study runs

- a timed transfer (ttcp with a time instead of a byte count) where the study counts
  bytes: a connection the network starves (europe-vp's unspaced cells against the UPC)
  would never finish a byte count; the study's own file with ``--set nbytes=off
  --set sender.type.duration=S`` (``Emulated.timed``); wan-window's transfers are
  timed already; wan-mismatch's cases, which change which
  connections exist, are one experiment of four cases one after another
  (``wan-mismatch-emu.netspec``);
- by default a part of the study's grid (``Emulated.reduced``), said on stderr with the
  study's full size; ``sets`` (``--set window=16K,32K,48K``) widen or change it,
  ``full_grid`` runs all of it.

The simulator's column is the study as ``cellbench reproduce NAME`` runs it (its
hosts' TCP flavour, its own transfer: 32 MB, 16 MB or 10 s) on the same cases; the
``sets`` other than the cases' parameters apply to the emulator only.
Hosts' profiles and TCP flavours do not apply to a real kernel (a one-line note says
so); ``kernel_cc`` sets every host's congestion control (default: the kernel's).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cellbench import scratch
from cellbench.reproduce import study

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.plan import Plan
    from cellbench.experiment.results import Result


#: wan-mismatch's fixed window and write size (wan-mismatch-case1.netspec, -case2).
MISMATCH = {"window": 131072, "write_size": 65536}

#: A TCP sink's wait for the rest after its timed source's end (the real engine waits
#: 30 s); a starved connection's run ends that long after its transfer.
DRAIN_S = 3.0


def emulated(name: str) -> study.Emulated:
    """Study ``name``'s emulated form (a ValueError for a study without one)."""
    from cellbench.reproduce import REGISTRY

    s = REGISTRY[name].emulated
    if s is None:
        raise ValueError(
            f"reproduce {name} is not available with --engine emu yet (it is for: "
            f"{', '.join(studies())})"
        )
    return s


def studies() -> list[str]:
    """The studies that run on the emulator, in the registry's order."""
    from cellbench.reproduce import REGISTRY

    return [s.name for s in REGISTRY.values() if s.emulated is not None]


def experiment_file(name: str) -> Path:
    return study.experiment_file(emulated(name).file)


def plan(name: str, **options) -> tuple[Plan, str]:
    """The emulated study's plan (its first variant's), and a line saying what part of
    the study it runs; ``options`` as ``plans`` takes them."""
    got, said = plans(name, **options)
    return got[0][1], said


def plans(
    name: str,
    *,
    sets: list[str] | None = None,
    full_grid: bool = False,
    seconds: float | None = None,
    kernel_cc: str | None = None,
    replications: int | None = None,
    seed: int | None = None,
) -> tuple[list[tuple[str, Plan]], str]:
    """The emulated study's plans, one per variant (``Emulated.variants``; a study
    without: one, named ``""``), and a line saying what part of the study they run."""
    from cellbench.experiment.plan import as_sets, make_plan

    s = emulated(name)
    file = experiment_file(name)
    if replications is None:
        replications = s.replications
    timed = as_sets(s.timed)
    every = make_plan(file, sets=timed, replications=replications, seed=seed, file=str(file))
    chosen = timed + ([] if full_grid else as_sets(s.reduced))
    if seconds is not None:
        chosen.append(f"{s.duration}={seconds:g}")
    if kernel_cc is not None:
        hosts = every.experiments[0].hosts
        chosen += [f"testbed.host.{h.name}.kernel_cc={kernel_cc}" for h in hosts]
    variants, sets = _variants(name, s, sets or [])
    # A variant's values come before the command line's, which may change them.
    got = [
        (v, make_plan(file, sets=[*chosen, *vsets, *sets], replications=replications,
                      seed=seed, file=str(file)))
        for v, vsets in variants.items()
    ]  # fmt: skip
    p = got[0][1]
    # The variants' own keys are said by their names, not as the first one's values.
    every_variant = s.variants().values() if s.variants is not None else []
    theirs = {x.partition("=")[0] for vsets in every_variant for x in vsets}
    grid = ", ".join(
        f"{k}={'/'.join(str(v) for v in values)}"
        for k, values in _values(p).items()
        if not k.endswith(".kernel_cc") and k not in s.timed and k not in theirs
    )
    length = p.experiments[0].connections[0].traffic.duration_s
    cases = (
        f"{len(p.points)} of the study's {len(every.points)} cases ({grid})"
        if s.params
        else f"its {s.transfers_per_run} cases one after another"
    )
    if s.variant_key:
        cases = f"{len(got)} {s.variant_key}s ({', '.join(variants)}), each on {cases}"
    runs = sum(q.runs_total for _, q in got)
    said = (
        f"reproduce {name} --engine emu: {cases}, {length:g} s transfers, "
        f"{p.replications} replication(s): about "
        f"{runs * s.transfers_per_run * (length + 2):.0f} s of real time"
    )
    if len(every.points) > 1 and not full_grid:
        said += "; --set KEY=V1,V2 changes them, --full-grid runs them all"
    if s.variant_key:
        said += f"; --set {s.variant_key}=A,B runs some of the {s.variant_key}s"
    return got, said


def _variants(
    name: str, s: study.Emulated, sets: list[str]
) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """The variants to run (all, or those ``--set VARIANT_KEY=A,B`` names) and the
    other --set values."""
    if s.variants is None:
        return {"": ()}, sets
    every = s.variants()
    chosen, rest = None, []
    for x in sets:
        key, _, value = x.partition("=")
        if key.strip() != s.variant_key:
            rest.append(x)
            continue
        chosen = [v.strip() for v in value.split(",")]
        for v in chosen:
            if v not in every:
                raise ValueError(
                    f"--set {x}: {name} has no {s.variant_key} {v!r}; expected some of "
                    f"{', '.join(every)}"
                )
    return ({v: every[v] for v in every if chosen is None or v in chosen}, rest)


def _values(p: Plan) -> dict[str, list]:
    """Each swept parameter's values in the plan, in its order (``seconds`` aside)."""
    out: dict[str, list] = {}
    for i in range(len(p.points)):
        for k, v in p.param_values(i).items():
            if k != "seconds" and v not in out.setdefault(k, []):
                out[k].append(v)
    return out


def run(
    name: str,
    *,
    sets: list[str] | None = None,
    full_grid: bool = False,
    seconds: float | None = None,
    kernel_cc: str | None = None,
    replications: int | None = None,
    seed: int | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    sim: dict | None = None,
    workers: int = 0,
) -> pd.DataFrame:
    """Run study ``name`` on the emulator (stored in ``out`` when given), and the
    simulator on the same cases; one row per connection per case and replication,
    the simulator's beside it (``sim_throughput_bps``, ``sim_limited_by``: its mean
    and most common limit over the study's replications). ``sim``: the simulator's
    ``seed``, study options (``params``: lan-buffers' profile, flavour, ...) and --set
    values (``sets``: europe-vp's stall), from ``Emulated.options``; or None for no
    simulator column."""
    import pandas as pd

    from cellbench.engines import loop
    from cellbench.engines.emu import check_platform
    from cellbench.experiment import results

    check_platform()
    got, said = plans(
        name,
        sets=sets,
        full_grid=full_grid,
        seconds=seconds,
        kernel_cc=kernel_cc,
        replications=replications,
        seed=seed,
    )
    print(f"cellbench: note: {said}", file=sys.stderr)
    frames: list[pd.DataFrame] = []
    said_notes: set[str] = set()
    with scratch.directory("cellbench-emu-") as tmp:
        root = Path(out) if out is not None else Path(tmp) / f"{name}.result"
        for variant, p in got:
            # Each variant a result of its own: OUT/VARIANT.
            dest = root / variant if variant else root
            engine = _engine_saying_once(said_notes, drain_s=DRAIN_S)
            loop.run_plan(p, dest, engine, resume=resume, overwrite=overwrite)
            frames.append(frame(name, results.load(dest), variant))
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    p = got[0][1]
    if sim is not None:
        df = _beside_sim(name, df, _values(p), sim, workers)
        flavours = {h.flavour for h in p.experiments[0].hosts}
        given = sim.get("params", {}).get("flavour")
        df.attrs["sim_flavour"] = given or "/".join(sorted(flavours))
    return df


def _engine_saying_once(said: set[str], **options: Any):
    """The emulator engine, its notes (hosts' profiles ignored, ...) said once for all
    the variants' runs: ``said`` holds those said before."""
    from cellbench.engines.emu import EmuEngine

    class NotesOnce(EmuEngine):
        def check(self, plan) -> list[str]:
            notes = [n for n in super().check(plan) if n not in said]
            said.update(notes)
            return notes

    return NotesOnce(**options)


def frame(name: str, result: Result, variant: str = "") -> pd.DataFrame:
    """A stored emulated study's rows: the simulator's row keys (the study's parameter
    names, or its own ``Emulated.row``; throughput_bps, segment_loss_rate, cells_lost,
    cells_policed, limited_by; an ABR circuit's abr_* figures) and the emulator's
    (engine, kernel_cc, retransmits, lateness_us, real_time); ``variant``: the
    variant the result ran (``Emulated.variant_key``)."""
    import pandas as pd

    s = emulated(name)
    df = result.to_pandas().sort_values(["replication", "point", "connection"], kind="stable")
    rows = []
    for r in df.to_dict(orient="records"):
        sent = r["data_pdus_sent"]
        if s.row is not None:
            case = s.row(r)
        else:
            case = {s.params[k]: _param(k, r[k]) for k in s.params} or _mismatch_case(r["test"])
        row = {s.variant_key: variant} if s.variant_key else {}
        row |= case
        row |= {
            "replication": int(r["replication"]),
            "seed": int(r["seed"]),
            "seconds": float(r["duration_s"]),
            "transmitter": r["transmitter"],
            "receiver": r["receiver"],
            "completed": bool(r["completed"]),
            "bytes": int(r["bytes"]),
            "throughput_bps": float(r["throughput_bps"]),
            "segment_loss_rate": r["data_pdus_lost"] / sent if sent else 0.0,
            "cells_lost": int(r["cells_lost"]),
            "cells_policed": int(r["cells_policed"]),
            "limited_by": r["limited_by"],
            "limit_evidence": r["limit_evidence"],
            "engine": "emu",
            "kernel_cc": r["kernel_cc"],
            "retransmits": None if pd.isna(r["retransmits"]) else int(r["retransmits"]),
            "lateness_us": {q: float(r[f"lateness_{q}_us"]) for q in ("p50", "p99", "max")},
            "real_time": bool(r["real_time"]),
        }
        # The study's own reading of a measure (a UDP stream's datagrams that arrived).
        row |= case
        if "met_contract" in r and not pd.isna(r["met_contract"]):
            row["met_contract"] = bool(r["met_contract"])
        # An ABR data circuit's figures, as the simulator's rows have them.
        row |= {k: v for k, v in r.items() if k.startswith("abr_") and not pd.isna(v)}
        if r.get("notes"):
            row["notes"] = r["notes"]
        rows.append(row)
    return pd.DataFrame(rows)


def _mismatch_case(test: str) -> dict:
    """wan-mismatch-emu.netspec's test c<case>-<pacing or none>-<sender> as the
    simulator's row names the case (the sender is the row's transmitter)."""
    case, pacing, _ = test.split("-", 2)
    return {
        "case": int(case[1:]),
        "pacing_mbps": None if pacing == "none" else float(pacing),
        **MISMATCH,
    }


def _param(key: str, value: Any) -> Any:
    """A stored sweep value as the simulator's rows give it (spacing ``off``: None)."""
    if key == "spacing_us":
        return None if value == "off" else float(value)
    return int(value)


def _beside_sim(
    name: str, df: pd.DataFrame, values: dict[str, list], sim: dict, workers: int
) -> pd.DataFrame:
    """The simulator's study on the emulated cases (its own transfer, replications and
    hosts), its mean throughput and most common limit joined to each emulated row."""
    from cellbench.experiment.results import most_common_limit
    from cellbench.reproduce import REGISTRY

    s = emulated(name)
    # The emulated cases as the simulator's part takes them: its own options, or --set
    # values of its file (the same file's parameters).
    params = {s.sim_params[k]: vs for k, vs in values.items() if k in s.sim_params}
    cases = {k: vs for k, vs in values.items() if k in s.params and k not in s.sim_params}
    opts = study.Options(
        seed=sim.get("seed"), workers=workers, parts=(s.sim_part,),
        params=sim.get("params", {}) | params,
        sets=(*sim.get("sets", ()), *study.sets(cases)),
    )  # fmt: skip
    simdf = study.frame(REGISTRY[name], opts, study.run_parts(REGISTRY[name], opts))
    keys = s.keys()

    def cases(frame: pd.DataFrame) -> list[tuple]:
        # Back to back (spacing None) must match itself.
        rows = frame[keys].itertuples(index=False, name=None)
        return [tuple("off" if v is None or v != v else v for v in t) for t in rows]

    by = {}
    for k, g in simdf.assign(_case=cases(simdf)).groupby("_case", sort=False):
        by[k] = (
            float(g.throughput_bps.mean()),
            most_common_limit(g)[0],
            float(g.cells_lost.mean()),
        )
    got = [by.get(k, (None, None, None)) for k in cases(df)]
    return df.assign(
        sim_throughput_bps=[g[0] for g in got],
        sim_limited_by=[g[1] for g in got],
        sim_cells_lost=[g[2] for g in got],
    )


def _number(x: Any) -> str:
    """A case's value in the table: ``none`` for no spacing or pacing."""
    import pandas as pd

    return "none" if x is None or pd.isna(x) else f"{x:g}"


def report(name: str, df: pd.DataFrame) -> str:
    """The emulated rows beside the simulator's, with units and the timing's honesty."""
    import pandas as pd

    s = emulated(name)
    show = pd.DataFrame()
    for k in s.keys():
        show[k] = df[k].map(lambda x: x if isinstance(x, str) else _number(x))
    if "replication" in df and df.replication.nunique() > 1:
        show["rep"] = df.replication
    show["emu Mb/s"] = (df.throughput_bps / 1e6).round(3)
    if "sim_throughput_bps" in df:
        show["sim Mb/s"] = (df.sim_throughput_bps / 1e6).round(3)
    # A UDP stream has no retransmissions (None): "-", the TCP streams' stay integers.
    show["retrans"] = df.retransmits.map(lambda x: "-" if x is None or x != x else int(x))
    show["seg loss"] = df.segment_loss_rate.map(lambda x: f"{100 * x:.2f}%")
    show["cells_lost"] = df.cells_lost
    if "sim_cells_lost" in df:
        show["sim cells_lost"] = df.sim_cells_lost.map(_number)
    show["cells_policed"] = df.cells_policed
    if s.row_keys:
        show["fairness"] = _fairness(df, s, "throughput_bps")
        if "sim_throughput_bps" in df:
            show["sim fairness"] = _fairness(df, s, "sim_throughput_bps")
    show["p99 late µs"] = df.lateness_us.map(lambda x: round(x["p99"], 1))
    show["emu limited by"] = df.limited_by
    if "sim_limited_by" in df:
        show["sim limited by"] = df.sim_limited_by
    cc = "/".join(sorted({str(x) for x in df.kernel_cc}))
    seconds = "/".join(f"{x:g}" for x in sorted(df.seconds.unique()))
    head = [
        f"{name}, emulated: throughput in Mb/s (10^6 bit/s); seg loss = data PDUs lost / sent",
        f"emu: this machine's Linux TCP ({cc}) over the emulated cells in real time, "
        f"{seconds} s transfers"
        + (
            f"; sim: the simulator's {df.attrs['sim_flavour']} on the same cases, the "
            f"study's own {s.sim_transfer} transfer"
            if "sim_flavour" in df.attrs
            else ""
        ),
    ]
    if s.note:
        head.append(s.note)
    late = df[~df.real_time]
    foot = []
    if len(late):
        foot.append(
            f"NOT REAL-TIME: {len(late)} of {len(df)} row(s) had a p99 lateness above one cell "
            "time of the slowest link; their timing is not the testbed's: rerun on an idle machine"
        )
    return "\n".join(head + [show.to_string(index=False)] + foot)


def _fairness(df: pd.DataFrame, s: study.Emulated, column: str) -> pd.Series:
    """Each case's Jain's fairness index of its connections' ``column`` (the case: its
    keys but ``row_keys``, and its replication), on each of its rows."""
    from cellbench.experiment.results.contention import jain_index

    case = [k for k in s.keys() if k not in s.row_keys] + ["replication"]
    got = df.groupby(case, sort=False, dropna=False)[column].transform(
        lambda x: jain_index([float(v) for v in x if v is not None and v == v])
    )
    return got.map(lambda f: f"{f:.2f}")
