"""``cellbench plot --kind port-buffer``: many connections through one congested port
(``reproduce ubr``): against the port's buffer, a line per drop policy (and per MTU
where it is swept), the effective throughput and the share of the port's time spent on
wasted cells, from ``contention.port_time``."""

from __future__ import annotations

from cellbench.experiment.results.contention import port_time


class PortBufferError(ValueError):
    pass


def port_buffer(result, fig, df, picked) -> None:
    """``df``: the result's rows as ``plots.select`` picked them (a ``buffer`` and a
    ``policy`` column: the sweep's variables, as ``reproduce ubr`` names them)."""
    if not {"buffer", "policy"} <= set(df.columns):
        raise PortBufferError(
            "port-buffer needs the port buffer and the drop policy swept as $buffer and "
            "$policy (cellbench reproduce ubr --out DIR: DIR/buffers)"
        )
    pt = port_time(result)
    if pt is None:
        raise PortBufferError("port-buffer needs a result with per-port idle and wasted cells")
    keys = [k for k in ("buffer", "policy", "mtu") if k in df.columns]
    runs = df.drop_duplicates("run")[["run", *keys]]
    pt = pt.merge(runs, on="run")
    lines = ["policy", "mtu"] if "mtu" in pt and pt["mtu"].nunique() > 1 else ["policy"]
    eff, waste = fig.subplots(2, 1, sharex=True)
    for k, (label, d) in enumerate(pt.groupby(lines, sort=False)):
        g = d.groupby("buffer").mean(numeric_only=True).sort_index()
        name = ", ".join(
            f"{c} {v}" for c, v in zip(lines, label if isinstance(label, tuple) else (label,))
        )
        style = {"marker": "o", "color": f"C{k % 10}"}
        eff.plot(g.index, g["effective"], label=name, **style)
        waste.plot(g.index, g["wasted_pct"], label=name, **style)
    eff.set_ylabel("effective throughput\n(of the port's payload rate)")
    waste.set_ylabel("wasted cells\n(% of the port's time)")
    waste.set_xlabel("switch port buffer (cells)")
    waste.set_xscale("log", base=2)
    eff.set_ylim(bottom=0)
    waste.set_ylim(bottom=0)
    eff.legend(fontsize="small")
    eff.set_title(
        "effective throughput and wasted cells against the port buffer"
        + (f" ({', '.join(f'{k}={v}' for k, v in picked.items())})" if picked else "")
    )
