"""One NetSpec ``test { }`` block read into an Endpoint: its keys, its protocol and
socket options, its addresses and its service.
"""

from __future__ import annotations

import re

from cellbench.experiment import abr as abrmod
from cellbench.experiment.lang import (
    Block,
    Call,
    ExperimentError,
    HostPort,
    Name,
    Setting,
    expected,
    render,
)
from cellbench.experiment.model.limits import U32_MAX
from cellbench.experiment.model.records import Endpoint
from cellbench.experiment.model.traffic import _traffic
from cellbench.experiment.model.values import _flag, _number

PROTOCOL_KEYS = ("window", "sndbuf", "rcvbuf", "nodelay", "pacing", "congestion", "mss")
#: A kernel's congestion control module name (TCP_CONGESTION takes up to 15 bytes).
_CONGESTION_NAME = re.compile(r"[a-z][a-z0-9_]{0,14}\Z")
TEST_KEYS = ("type", "protocol", "own", "peer", "service")
#: Test keys that may be left out.
_OPTIONAL_TEST_KEYS = ("protocol", "service")


def _endpoint(b: Block) -> Endpoint:
    got: dict[str, Setting] = {}
    for s in b.settings():
        if s.key not in TEST_KEYS:
            raise expected(s.pos, f"key '{s.key}'", f"a test key: {', '.join(TEST_KEYS)}")
        if s.key in got:
            raise expected(
                s.pos, f"'{s.key}' a second time", f"each key once (first at {got[s.key].pos})"
            )
        got[s.key] = s
    name = b.name or f"test@{b.pos.line}"
    for k in TEST_KEYS:
        if k not in got and k not in _OPTIONAL_TEST_KEYS:
            where = b.name_pos or b.pos
            raise ExperimentError(where, f"test {name}: found no '{k}', expected '{k} = ...;'")
    traffic = _traffic(got["type"])
    proto = got.get("protocol")
    pname, window, sndbuf, rcvbuf, nodelay, pacing = "tcp", None, None, None, False, None
    congestion, mss = None, None
    ppos = proto.value.pos if proto else b.pos
    if proto is not None:
        v = proto.value
        call = Call(v.text, [], v.pos) if isinstance(v, Name) else v
        if not isinstance(call, Call) or call.name not in ("tcp", "udp"):
            raise expected(v.pos, render(v), "a protocol: tcp (...) or udp (...)")
        pname = call.name
        for a in call.args:
            if a.key not in PROTOCOL_KEYS:
                shown = f"key '{a.key}'" if a.key else render(a.value)
                raise expected(a.pos, shown, f"a {call.name}() key: {', '.join(PROTOCOL_KEYS)}")
            if a.key == "nodelay":
                nodelay = _flag(a.value, "nodelay")
            elif a.key == "pacing" and isinstance(a.value, Name) and a.value.text == "off":
                pacing = None  # no pacing: a sweep may set a rate at one point, none at another
            elif a.key == "pacing":
                pacing = float(_number(a.value, "pacing (Mb/s)", lo=0, integer=False))
                if pacing <= 0:
                    raise expected(a.value.pos, render(a.value), "a pacing rate > 0 Mb/s")
                traffic.where["pacing"] = a.value.pos
            elif a.key == "congestion":
                if not (isinstance(a.value, Name) and _CONGESTION_NAME.match(a.value.text)):
                    raise expected(
                        a.value.pos,
                        render(a.value),
                        "a kernel congestion control name for congestion (cubic, reno, bbr ...)",
                    )
                congestion = a.value.text
            elif a.key == "mss":
                # Linux's TCP_MAXSEG range: TCP_MIN_MSS (88) to MAX_TCP_WINDOW (32767).
                mss = int(_number(a.value, "mss (bytes)", lo=88, integer=True, hi=32767))
            else:
                n = int(_number(a.value, f"{a.key} (bytes)", lo=1, integer=True, hi=U32_MAX))
                window, sndbuf, rcvbuf = (
                    n if a.key == "window" else window,
                    n if a.key == "sndbuf" else sndbuf,
                    n if a.key == "rcvbuf" else rcvbuf,
                )
            if pname == "udp" and a.key in ("congestion", "mss"):
                raise expected(
                    a.pos, f"key '{a.key}'", "a udp() key (congestion and mss are TCP's)"
                )
    addrs = []
    for k in ("own", "peer"):
        v = got[k].value
        if not isinstance(v, HostPort):
            raise expected(v.pos, render(v), f"HOST:PORT for {k}")
        addrs.append(v)
    return Endpoint(
        name,
        b.pos,
        traffic,
        got["type"].value.pos,
        pname,
        ppos,
        window,
        sndbuf,
        rcvbuf,
        nodelay,
        *addrs,
        pacing_mbps=pacing,
        congestion=congestion,
        mss=mss,
        abr=abrmod.service(got["service"]) if "service" in got else None,
        service_pos=got["service"].value.pos if "service" in got else None,
    )
