"""One NetSpec ``test { }`` block read into an Endpoint: its keys, its protocol and
socket options, its addresses and its service.
"""

from __future__ import annotations

import re

from cellbench import vocab
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
from cellbench.experiment.model.limits import MAX_TCP_WINDOW, TCP_MIN_MSS
from cellbench.experiment.model.records import Endpoint
from cellbench.experiment.model.traffic import _traffic
from cellbench.experiment.values import _flag, _number, _spec_number, _spec_value

#: What a connection's keys read as when a test leaves them out (the run spec's).
_CONNECTION = vocab.DEFAULTS["connection"]
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
    # Left out: the run spec's protocol and TCP_NODELAY (the core's defaults).
    pname, nodelay = _CONNECTION["protocol"], _CONNECTION["nodelay"]
    window, sndbuf, rcvbuf, pacing = None, None, None, None
    congestion, mss = None, None
    #: Where the protocol and its keys are set (a refusal of the core lands there).
    where = {}
    ppos = proto.value.pos if proto else b.pos
    if proto is not None:
        v = proto.value
        where["protocol"] = v.pos
        call = Call(v.text, [], v.pos) if isinstance(v, Name) else v
        if not isinstance(call, Call) or call.name not in ("tcp", "udp"):
            raise expected(v.pos, render(v), "a protocol: tcp (...) or udp (...)")
        pname = call.name
        for a in call.args:
            if a.key not in PROTOCOL_KEYS:
                shown = f"key '{a.key}'" if a.key else render(a.value)
                raise expected(a.pos, shown, f"a {call.name}() key: {', '.join(PROTOCOL_KEYS)}")
            where[a.key] = a.value.pos
            if a.key == "nodelay":
                nodelay = _flag(a.value, "nodelay")
            elif a.key == "pacing" and isinstance(a.value, Name) and a.value.text == "off":
                pacing = None  # no pacing: a sweep may set a rate at one point, none at another
            elif a.key == "pacing":
                pacing = float(_spec_value(a.value, "pacing (Mb/s)", "connection", "pacing_mbps"))
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
                # Linux's TCP_MAXSEG range (the real engine's; the simulator's MSS is the MTU's).
                mss = int(
                    _number(a.value, "mss (bytes)", lo=TCP_MIN_MSS, integer=True, hi=MAX_TCP_WINDOW)
                )
            else:
                # window sets both buffers: the run spec's range of each.
                spec_key = "sndbuf" if a.key == "window" else a.key
                n = int(
                    _spec_number(a.value, f"{a.key} (bytes)", "connection", spec_key, integer=True)
                )
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
        where=where,
    )
