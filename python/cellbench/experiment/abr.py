"""ABR in the experiment language (the ATM Forum's Traffic Management 4.0, §5.10;
the simulator's ``sim::net::abr``): a test's ``service`` and a switch's ``abr``.

In a transmitter's test block::

    service = abr (pcr = 149.76M, mcr = 0, icr = 10M, rif = 1/16, rdf = 1/16, nrm = 32);
    service = ubr;                        # the default: no rate control

Rates are bit/s of whole 53-byte cells; ``K``, ``M`` and ``G`` after a rate are
decimal (149.76M = 149,760,000 bit/s, OC-3c's cell rate), unlike byte sizes. Left
out: TM 4.0's defaults (§5.10.2): PCR the transmitter's cell rate, MCR 0, ICR = PCR,
RIF = RDF = 1/16, Nrm = 32. Only the data circuit is ABR; its ACKs' circuit stays UBR.

In a ``switch { }`` of the testbed (every output port of that switch)::

    abr = efci (threshold = 128);        # mark data cells' EFCI above 128 queued cells
    abr = relative (threshold = 128);    # CI in backward RM cells above it, NI above half
    abr = erica (target = 0.9, interval_us = 1000);   # ERICA's explicit rate

A threshold left out is half the buffer; ERICA's target and interval left out are the
core's defaults (``vocab.DEFAULTS["abr_switch"]``: 0.9 and 1 ms, assumptions whose
ranges ``sim::spec::ERICA_TARGET`` cites), sent only when the file sets them.
"""

from __future__ import annotations

from cellbench import vocab
from cellbench.experiment.lang import Call, Name, Number, Setting, Value, expected, render

SERVICES = ("ubr", "abr")
ABR_KEYS = ("pcr", "mcr", "icr", "rif", "rdf", "nrm")
SWITCHES = ("efci", "relative", "erica")
_DECIMAL = {"K": 1e3, "M": 1e6, "G": 1e9}
#: The core's ranges (``vocab.SPEC_KEYS``): a source's factors and Nrm, its least PCR
#: (one cell a second, in bit/s); a switch's threshold, ERICA's target and interval.
_FACTOR = vocab.spec_range("abr", "rif")
_NRM = vocab.spec_range("abr", "nrm")
_LEAST_PCR = vocab.spec_range("abr", "pcr_bps")[0]
_THRESHOLD = vocab.spec_range("abr_switch", "threshold_cells")
_TARGET = vocab.spec_range("abr_switch", "target")
_INTERVAL_US = vocab.spec_range("abr_switch", "interval_us")
#: ERICA's target and interval (µs) when a switch leaves them out: the core's.
ERICA_TARGET: float = vocab.spec_key("abr_switch", "target")["default"]
ERICA_INTERVAL_US: float = vocab.spec_key("abr_switch", "interval_us")["default"]


def rate_bps(v: Value, what: str) -> float:
    """A cell rate in bit/s: a number, with K/M/G read as decimal multipliers."""
    if not isinstance(v, Number) or not isinstance(v.value, (int, float)):
        raise expected(v.pos, render(v), f"a rate in bit/s of cells (149.76M) for {what}")
    text = v.text
    if text[-1] in _DECIMAL and "/" not in text:
        x = float(text[:-1]) * _DECIMAL[text[-1]]
    else:
        x = float(v.value)
    if not 0 <= x < float("inf"):
        raise expected(v.pos, render(v), f"a rate >= 0 bit/s for {what}")
    return x


def _call(v: Value, names: tuple[str, ...], what: str) -> Call:
    call = Call(v.text, [], v.pos) if isinstance(v, Name) else v
    if not isinstance(call, Call) or call.name not in names:
        raise expected(v.pos, render(v), what)
    seen: dict[str, object] = {}
    for a in call.args:
        if not a.key:
            raise expected(a.pos, render(a.value), f"key = value in {call.name}()")
        if a.key in seen:
            raise expected(a.pos, f"'{a.key}' a second time", f"each {call.name}() key once")
        seen[a.key] = a
    return call


def service(s: Setting) -> dict | None:
    """A test's ``service``: None for UBR, else the spec's ``abr`` record."""
    call = _call(s.value, SERVICES, "a service: ubr or abr (pcr = ..., mcr = ..., ...)")
    if call.name == "ubr":
        if call.args:
            raise expected(call.args[0].pos, f"key '{call.args[0].key}'", "ubr takes no keys")
        return None
    abr: dict = {}
    for a in call.args:
        if a.key not in ABR_KEYS:
            raise expected(a.pos, f"key '{a.key}'", f"an abr() key: {', '.join(ABR_KEYS)}")
        if a.key in ("pcr", "mcr", "icr"):
            abr[f"{a.key}_bps"] = rate_bps(a.value, f"abr {a.key}")
        elif a.key in ("rif", "rdf"):
            x = a.value.value if isinstance(a.value, Number) else None
            if not (isinstance(x, (int, float)) and _FACTOR[0] < x <= _FACTOR[1]):
                raise expected(
                    a.value.pos,
                    render(a.value),
                    f"a factor above {_FACTOR[0]:g} and at most {_FACTOR[1]:g} for {a.key}",
                )
            abr[a.key] = float(x)
        else:
            x = a.value.value if isinstance(a.value, Number) else None
            if not (isinstance(x, int) and _NRM[0] <= x <= _NRM[1]):
                raise expected(
                    a.value.pos,
                    render(a.value),
                    f"nrm, cells per RM cell, {_NRM[0]:g} to {_NRM[1]:g}",
                )
            abr["nrm"] = x
    pcr, mcr = abr.get("pcr_bps"), abr.get("mcr_bps", 0.0)
    icr = abr.get("icr_bps", pcr)
    args = {a.key: a for a in call.args}
    if pcr is not None and pcr < _LEAST_PCR:
        raise expected(
            args["pcr"].value.pos, render(args["pcr"].value), f"pcr >= {_LEAST_PCR:g} (1 cell/s)"
        )
    if pcr is not None and mcr > pcr:
        raise expected(args["mcr"].value.pos, render(args["mcr"].value), f"mcr <= pcr ({pcr:g})")
    if "icr" in args and (icr <= 0 or icr < mcr or (pcr is not None and icr > pcr)):
        raise expected(
            args["icr"].value.pos, render(args["icr"].value), "icr above 0, between mcr and pcr"
        )
    return abr


def switch(s: Setting) -> dict:
    """A switch's ``abr``: the spec's ``abr`` record of a switch."""
    call = _call(s.value, SWITCHES, "an abr switch: efci (...), relative (...) or erica (...)")
    out: dict = {"kind": call.name}
    keys = ("target", "interval_us") if call.name == "erica" else ("threshold",)
    for a in call.args:
        if a.key not in keys:
            keys_of = f"one of its keys for {call.name}(): {', '.join(keys)}"
            raise expected(a.pos, f"key '{a.key}'", keys_of)
        x = a.value.value if isinstance(a.value, Number) else None
        if a.key == "threshold":
            if not (isinstance(x, int) and _THRESHOLD[0] <= x <= _THRESHOLD[1]):
                raise expected(a.value.pos, render(a.value), "a threshold of 1 cell or more")
            out["threshold_cells"] = x
        elif a.key == "target":
            if not (isinstance(x, (int, float)) and _TARGET[0] < x <= _TARGET[1]):
                raise expected(
                    a.value.pos,
                    render(a.value),
                    f"a target above {_TARGET[0]:g} and at most {_TARGET[1]:g} "
                    f"(left out: {ERICA_TARGET:g})",
                )
            out["target"] = float(x)
        else:
            if not (isinstance(x, (int, float)) and _INTERVAL_US[0] < x <= _INTERVAL_US[1]):
                raise expected(
                    a.value.pos,
                    render(a.value),
                    f"an interval above {_INTERVAL_US[0]:g} µs and at most {_INTERVAL_US[1]:g} µs "
                    f"(left out: {ERICA_INTERVAL_US:g} µs)",
                )
            out["interval_us"] = float(x)
    return out
