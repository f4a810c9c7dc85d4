"""A test's ``type = ...`` read into its Traffic: NetSpec's traffic types, their keys,
and random block sizes and periods (``uniform``, ``exponential``).
"""

from __future__ import annotations

from cellbench import vocab
from cellbench.experiment.lang import Call, ExperimentError, Name, Setting, expected, render
from cellbench.experiment.model.records import Distribution, Traffic
from cellbench.experiment.values import U32_MAX, _number, _shown, _spec_number, _spec_value

TRAFFIC_KEYS = {
    "full": ("blocksize", "duration", "nbytes"),
    # blocks: written back to back each period; or size: a burst of that many bytes in
    # blocks of at most blocksize; rate (bit/s): the period that gives that mean rate.
    "burst": ("blocksize", "period", "duration", "blocks", "size", "rate"),
    "burstq": ("blocksize", "period", "duration", "blocks", "size", "rate"),
    # A file transfer: blocks read from a disk at disk_rate bytes/s and written to the
    # socket as they come (a burstq whose period is the time one block takes to read).
    "ftp": ("blocksize", "disk_rate", "duration"),
    # netperf's TCP_RR: request/response transactions for a duration (bytes each way;
    # netperf's default -r 1,1). The transmitter's socket buffers size both of its
    # ends' buffers, the sink's both of the receiver's, as netperf -s and -S do.
    "rr": ("request", "response", "duration"),
    "sink": ("blocksize", "duration"),
}
#: NetSpec parameters cellbench knows but does not run yet.
TRAFFIC_LATER = ("repeats", "buffer")


#: NetSpec's application models (tcplib-derived), lower-cased.
APP_MODELS = {
    m.lower()
    for m in (
        "ftpItemSize",
        "ftpNOfItems",
        "ftpSessionInterarrival",
        "telnetPacketSize",
        "telnetPacketInterarrival",
        "telnetSessionInterarrival",
        "telnetSessionDuration",
        "voiceSessionInterarrival",
        "voiceSessionDuration",
        "videoTeleConferenceFrameSize",
        "videoMPEGFrameSize",
        "wwwItemSize",
        "wwwRequestInterarrival",
        "wwwSessionInterarrival",
        "httpItemSize",
    )
}


#: The range of a random parameter's values, the run spec's (blocksize in bytes, period
#: in µs); key names that cannot be random never get this far.
_BLOCKSIZE = vocab.spec_range("traffic", "blocksize")
_PERIOD_US = vocab.spec_range("traffic", "period_us")
_LAW_MIN = {"blocksize": _BLOCKSIZE[0], "period": _PERIOD_US[0]}
_LAW_MAX = {"blocksize": _BLOCKSIZE[1], "period": _PERIOD_US[1]}
_LAW_MIN.update({k: 0.0 for k in ("duration", "nbytes")})
_LAW_MAX.update({k: float("inf") for k in ("duration", "nbytes")})
#: The largest burst ``size`` names: the most blocks a period writes, each at most the
#: largest write (the run spec's ``blocks`` and ``blocksize``).
_MAX_BURST = vocab.spec_range("traffic", "blocks")[1] * _BLOCKSIZE[1]


def _distribution(call: Call, key: str) -> Distribution:
    name = call.name.lower()
    pos_args = [a.value for a in call.args if a.key is None]
    kw = {a.key: a.value for a in call.args if a.key is not None}
    if name == "uniform":
        if (
            pos_args
            and kw
            or len(pos_args) not in (0, 2)
            or (not pos_args and set(kw) != {"min", "max"})
        ):
            raise expected(call.pos, render(call), "uniform(min, max) or uniform(min=A, max=B)")
        lo_v, hi_v = pos_args if pos_args else (kw["min"], kw["max"])
        lo = _number(lo_v, f"the minimum of {key}", lo=0, integer=False, hi=_LAW_MAX[key])
        hi = _number(hi_v, f"the maximum of {key}", lo=0, integer=False, hi=_LAW_MAX[key])
        if lo < _LAW_MIN[key]:
            raise expected(
                lo_v.pos, render(lo_v), f"a minimum >= {_shown(_LAW_MIN[key])} for {key}"
            )
        if lo > hi:
            raise expected(call.pos, render(call), f"min <= max in uniform() for {key}")
        return Distribution("uniform", {"min": lo, "max": hi}, call.pos)
    if name == "exponential":
        if len(call.args) != 1 or (kw and set(kw) not in ({"mean"}, {"lambda"})):
            raise expected(
                call.pos,
                render(call),
                "exponential(mean), exponential(mean=M) or exponential(lambda=L)",
            )
        a = call.args[0]
        x = _number(a.value, f"the {a.key or 'mean'} of {key}", lo=0, integer=False)
        if x <= 0:
            raise expected(a.value.pos, render(a.value), f"a {a.key or 'mean'} > 0 for {key}")
        mean = 1 / x if a.key == "lambda" else x
        if mean > _LAW_MAX[key]:
            raise expected(
                a.value.pos, render(a.value), f"a mean <= {_shown(_LAW_MAX[key])} for {key}"
            )
        return Distribution("exponential", {"mean": mean}, call.pos)
    if name in APP_MODELS:
        raise ExperimentError(
            call.pos,
            f"not implemented: NetSpec application model {call.name}(...) for {key} "
            "(cellbench has uniform(min, max) and exponential(mean) so far)",
        )
    raise expected(
        call.pos, render(call), f"a number, uniform(min, max) or exponential(mean) for {key}"
    )


def _traffic(s: Setting) -> Traffic:
    v = s.value
    call = Call(v.text, [], v.pos) if isinstance(v, Name) else v
    if not isinstance(call, Call) or call.name not in TRAFFIC_KEYS:
        if isinstance(call, (Call, Name)) and call.name.lower() in APP_MODELS | {
            "telnet",
            "www",
            "http",
            "mpeg",
            "voice",
        }:
            raise ExperimentError(v.pos, f"not implemented: NetSpec traffic type {render(v)}")
        raise expected(v.pos, render(v), "a traffic type: full, burst, burstq, ftp, rr or sink")
    t = Traffic(call.name)
    allowed = TRAFFIC_KEYS[call.name]
    seen: set[str] = set()
    for a in call.args:
        if a.key is None:
            raise expected(
                a.pos, render(a.value), f"KEY=VALUE in {call.name}(): {', '.join(allowed)}"
            )
        if a.key in seen:
            raise expected(a.pos, f"'{a.key}' a second time", f"each {call.name}() key once")
        seen.add(a.key)
        t.where[a.key] = a.value.pos
        if a.key in TRAFFIC_LATER:
            raise ExperimentError(a.pos, f"not implemented: {call.name}() parameter '{a.key}'")
        if a.key not in allowed:
            raise expected(a.pos, f"key '{a.key}'", f"a {call.name}() key: {', '.join(allowed)}")
        if a.key in ("nbytes", "duration") and isinstance(a.value, Name) and a.value.text == "off":
            # None: one file gives a byte count or a time (full() takes exactly one), the
            # other set by --set (a timed transfer for the emulator: reproduce.emu).
            del t.where[a.key]
            continue
        if isinstance(a.value, (Call, Name)) and a.key in ("request", "response"):
            raise expected(a.value.pos, render(a.value), f"a number of bytes for {a.key}")
        if isinstance(a.value, (Call, Name)):
            dist = _distribution(
                a.value if isinstance(a.value, Call) else Call(a.value.text, [], a.value.pos), a.key
            )
            if a.key == "blocksize":
                t.blocksize = max(1, round(dist.mean))
            elif a.key == "period":
                t.period_us = dist.mean
            else:
                raise ExperimentError(
                    dist.pos, f"not implemented: a random {a.key} (only blocksize and period)"
                )
            t.random[a.key] = dist
            continue
        if a.key == "blocksize":
            # A byte count a run spec can hold (a sink's is its receiver_blocksize, a
            # u32); the range a write or a read takes is the core's check, at this
            # setting (its key path: traffic.blocksize, receiver_blocksize).
            t.blocksize = int(_number(a.value, "blocksize (bytes)", lo=0, integer=True, hi=U32_MAX))
        elif a.key in ("request", "response"):
            n = int(_spec_value(a.value, f"{a.key} (bytes)", "traffic", a.key))
            setattr(t, a.key, n)
        elif a.key == "nbytes":
            t.nbytes = int(_spec_value(a.value, "nbytes (bytes)", "traffic", "nbytes"))
        elif a.key == "duration":
            # Past a run's simulated-time limit from its start: model.checks, which knows
            # the start. A sink's duration never reaches the core: its range is checked here.
            t.duration_s = float(
                _spec_number(a.value, "duration (s)", "traffic", "duration_s", integer=False)
                if call.name == "sink"
                else _spec_value(a.value, "duration (s)", "traffic", "duration_s")
            )
        elif a.key == "period":
            # A period shorter than one write() (0 too) is the core's refusal, with the
            # host's least (sim::spec::write_sizes).
            t.period_us = float(_spec_value(a.value, "period (µs)", "traffic", "period_us"))
        elif a.key == "blocks":
            t.blocks = int(
                _spec_value(a.value, "blocks written back to back per period", "traffic", "blocks")
            )
        elif a.key == "size":
            t.burst_bytes = int(
                _number(a.value, "bytes per burst", lo=1, integer=True, hi=_MAX_BURST)
            )
        elif a.key == "rate":
            t.rate_bps = float(_number(a.value, "the mean rate (bit/s)", lo=0, integer=False))
            if t.rate_bps <= 0:
                raise expected(a.value.pos, render(a.value), "a rate > 0 bit/s")
        elif a.key == "disk_rate":
            # Any rate: the period it gives (one block read) is checked below and against
            # the host's fastest write (model.checks).
            t.disk_rate = float(
                _number(a.value, "the disk's read rate (bytes/s)", lo=0, integer=False, above=True)
            )
    if call.name == "full" and t.nbytes is None and t.duration_s is None:
        # Both given is the core's refusal (a conflict of traffic.nbytes and duration_s).
        raise expected(call.pos, render(call), "full() with duration= (s) or nbytes= (bytes)")
    if call.name == "rr":
        if t.duration_s is None:
            raise expected(call.pos, render(call), "rr() with duration= (s)")
        # The request is what the transmitter writes.
        t.blocksize = t.request
    if call.name == "ftp":
        for k, val in (("disk_rate", t.disk_rate), ("duration", t.duration_s)):
            if val is None:
                raise expected(call.pos, render(call), f"ftp() with {k}=")
        if "blocksize" in t.random:
            raise ExperimentError(
                t.where["blocksize"], "not implemented: ftp() with a random blocksize"
            )
        # One block read per period: the disk's rate, whatever the network does.
        t.period_us = t.blocksize / t.disk_rate * 1e6  # type: ignore[operator]
        if t.period_us > _PERIOD_US[1]:
            raise expected(t.where["disk_rate"], f"{t.disk_rate:g}", "a faster disk (bytes/s)")
    if call.name in ("burst", "burstq"):
        _burst_shape(call, t)
        for k, val in (("period", t.period_us), ("duration", t.duration_s)):
            if val is None:
                raise expected(call.pos, render(call), f"{call.name}() with {k}=")
    return t


def _burst_shape(call: Call, t: Traffic) -> None:
    """``size``: a burst of that many bytes, as equal blocks of at most ``blocksize``;
    ``rate``: the period that makes the mean rate (bit/s). Each says one thing once."""
    if t.blocksize < 1 and (t.burst_bytes is not None or t.rate_bps is not None):
        # size= and rate= are counted in blocks: the language needs one of a byte or more.
        raise expected(
            t.where["blocksize"], f"blocksize={t.blocksize}", "a block of at least 1 byte"
        )
    if t.burst_bytes is not None:
        if "blocks" in t.where:
            raise expected(t.where["size"], f"size={t.burst_bytes}", "size= or blocks=, not both")
        if "blocksize" in t.random:
            raise ExperimentError(t.where["size"], "not implemented: size= with a random blocksize")
        t.blocks = -(-t.burst_bytes // t.blocksize)
        t.blocksize = -(-t.burst_bytes // t.blocks)
    if t.rate_bps is not None:
        if t.period_us is not None:
            raise expected(t.where["rate"], f"rate={t.rate_bps:g}", "rate= or period=, not both")
        if "blocksize" in t.random:
            raise ExperimentError(t.where["rate"], "not implemented: rate= with a random blocksize")
        t.period_us = t.blocks * t.blocksize * 8 / t.rate_bps * 1e6
        if not 0 < t.period_us <= _PERIOD_US[1]:
            raise expected(
                t.where["rate"], f"rate={t.rate_bps:g}", "a rate giving a period in range"
            )
