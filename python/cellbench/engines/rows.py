"""The stored rows every engine shares: a connection's identity and configuration,
and the network's ports (the simulator's and the emulator's)."""

from __future__ import annotations


def connection_row(plan, task, c, params: dict, sndbuf: int | None, rcvbuf: int | None) -> dict:
    """A stored row's identity and configuration columns for one connection, whichever
    engine measured it (the socket buffers are the ones it ran with), and the sweep's
    parameter columns; the engine adds its measures."""
    t = c.traffic
    row = {
        "run": task.run,
        "point": task.point,
        "replication": task.replication,
        "seed": plan.seed,
        "connection": c.index,
        "test": c.name,
        "transmitter": c.transmitter,
        "receiver": c.receiver,
        "protocol": c.protocol,
        "traffic": t.type,
        "blocksize": t.blocksize,
        "receiver_blocksize": c.receiver_blocksize,
        "nbytes": t.nbytes,
        "duration_s": t.duration_s,
        "period_us": t.period_us,
        "offered_bps": t.blocks * t.blocksize * 8 / (t.period_us * 1e-6) if t.period_us else None,
        "sndbuf": sndbuf,
        "rcvbuf": rcvbuf,
        "nodelay": c.nodelay,
    }
    for k, v in params.items():
        row[plan.columns[k]] = v
    return row


def ident(task) -> dict:
    """The columns naming a run in every table."""
    return {"run": task.run, "point": task.point, "replication": task.replication}


def port_rows(ident: dict, ports: list[dict], shift: float = 0.0) -> tuple[list[dict], list[dict]]:
    """The network's per-port results as rows of the ports table and, with series, of
    the queue table (``shift`` takes the network's time to the run's, s): the
    simulator's and the emulator's."""
    rows, queue = [], []
    for p in ports:
        p = dict(p)
        for t_s, cells in p.pop("queue_series", None) or []:
            queue.append(
                {**ident, "port": p["port"], "host": p["host"], "t_s": t_s + shift, "cells": cells}
            )
        rows.append({**ident, **p})
    return rows, queue
