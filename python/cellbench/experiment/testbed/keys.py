"""The testbed language's keys as a table: per block (host, switch, trunk), each key's
field, how its value is read, and the run spec's key it sets, whose kind, range and
choices the core gives (``vocab.SPEC_KEYS``). A value of the wrong kind is refused here,
at its position. A switch's or trunk's value out of range, and what depends on other
keys (a threshold within the buffer, credits with credit flow control), is the core's
check: the core checks every switch and trunk a testbed gives, and the experiment maps
its refusal back onto the setting through ``Testbed.positions`` (model's refusals). A
host's range is checked here too: the core sees only the hosts a run uses.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cellbench import vocab
from cellbench.experiment import abr as abrmod
from cellbench.experiment.lang import (
    Block,
    ExperimentError,
    Name,
    Number,
    Pos,
    Setting,
    String,
    expected,
    render,
)
from cellbench.experiment.testbed.schema import (
    ADAPTERS,
    ETHERNET_PHYS,
    FLAVOUR_MAX_SOCKBUF,
    FLOW_CONTROLS,
    INTERFACES,
    PACING_COUNTS,
    PHYS,
    POLICIES,
    PROFILES,
    SPACINGS,
    HostSpec,
)
from cellbench.experiment.values import _spec_value


def _shown(x: float) -> str:
    """A bound as a message gives it: %g (1e+06), a whole number below a billion in full."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e9 else f"{x:g}"


def number(s: Setting, what: str, lo: float, hi: float, integer: bool = True) -> int | float:
    v = s.value
    if not isinstance(v, Number) or (integer and not isinstance(v.value, int)):
        kind = "a whole number" if integer else "a number"
        raise expected(v.pos, render(v), f"{kind} {_shown(lo)}..{_shown(hi)} for {what}")
    if not lo <= v.value <= hi:
        raise expected(v.pos, render(v), f"{what} in {_shown(lo)}..{_shown(hi)}")
    return v.value


def choice(s: Setting, what: str, choices: tuple[str, ...]) -> str:
    v = s.value
    text = v.text if isinstance(v, (Name, String)) else None
    if text not in choices:
        raise expected(v.pos, render(v), f"{what}: one of {', '.join(choices)}")
    return text  # type: ignore[return-value]


def site(s: Setting) -> str:
    v = s.value
    if not isinstance(v, (Name, String)):
        raise expected(v.pos, render(v), "a site name")
    return v.text


# --- readers by the run spec's key: its kind and range from the core ----------------------
Reader = Callable[[Setting], Any]


def spec_number(record: str, key: str, what: str) -> Reader:
    """A number in the core's range for ``record.key``; whole when the key is an int."""
    k = vocab.spec_key(record, key)
    lo, hi = k["range"]
    integer = k["kind"] == "int"

    def read(s: Setting) -> int | float:
        v = s.value
        x = v.value if isinstance(v, Number) else None
        # A time that must be above its least (``above``): the least itself is refused too.
        if k["above"] and x is not None and x == lo:
            raise expected(v.pos, render(v), f"{what} above {_shown(lo)} and at most {_shown(hi)}")
        got = number(s, what, lo, hi, integer)
        return int(got) if integer else float(got)

    return read


def spec_type(record: str, key: str, what: str) -> Reader:
    """A number of the type the run spec's ``record.key`` holds, read as a connection's
    keys are (``values._spec_value``): the range the key takes is the core's check
    alone; its refusal names the key and lands on this setting (model's refusals)."""
    return lambda s: _spec_value(s.value, what, record, key)


def spec_range(record: str, key: str) -> str:
    """The core's range for ``record.key``, as a refusal shows it (``0.1..1e+06``)."""
    lo, hi = vocab.spec_key(record, key)["range"]
    return f"{_shown(lo)}..{_shown(hi)}"


def spec_choice(record: str, key: str, what: str) -> Reader:
    names = vocab.choices(record, key)
    return lambda s: choice(s, what, names)


def off_or(read: Reader, what: str) -> Reader:
    """``off`` (None), or what ``read`` reads; its refusal names both."""

    def read_off(s: Setting) -> Any:
        v = s.value
        if isinstance(v, Name) and v.text == "off":
            return None
        try:
            return read(s)
        except ExperimentError:
            raise expected(v.pos, render(v), f"{what} or off") from None

    return read_off


def flag(what: str) -> Reader:
    return lambda s: bool(number(s, f"{what} (0 or 1)", 0, 1))


def address(s: Setting) -> str:
    """``address = 10.1.0.1;`` (or a quoted IPv6 address): where the real engine finds the host."""
    v = s.value
    try:
        return str(ipaddress.ip_address(v.text if isinstance(v, (Name, String)) else ""))
    except ValueError:
        raise expected(v.pos, render(v), "an IP address such as 10.1.0.1") from None


#: ``--engine emu``'s per-namespace kernel TCP settings: testbed key -> sysctl, and what
#: a value must be (a congestion control name, 0/1, or a socket buffer limit in bytes).
KERNEL_SYSCTLS = {
    "kernel_cc": ("net.ipv4.tcp_congestion_control", "name"),
    "kernel_sack": ("net.ipv4.tcp_sack", "flag"),
    "kernel_timestamps": ("net.ipv4.tcp_timestamps", "flag"),
    "kernel_window_scaling": ("net.ipv4.tcp_window_scaling", "flag"),
    "kernel_rmem": ("net.ipv4.tcp_rmem", "bytes"),
    "kernel_wmem": ("net.ipv4.tcp_wmem", "bytes"),
}
#: A Linux socket buffer limit (tcp_rmem, tcp_wmem): a page (4096) to 1 GiB, the
#: emulator's bounds on what it writes into a namespace's sysctls.
KERNEL_BYTES = (4096, 1 << 30)


def kernel_value(s: Setting) -> str | int:
    """A ``kernel_*`` setting: a congestion control name (cubic, reno, bbr), 0 or 1, or a
    socket buffer limit in bytes."""
    kind = KERNEL_SYSCTLS[s.key][1]
    v = s.value
    if kind == "name":
        if isinstance(v, (Name, String)) and v.text.replace("_", "").isalnum():
            return v.text
        raise expected(v.pos, render(v), "a Linux congestion control name such as cubic or reno")
    if kind == "flag":
        return int(number(s, f"{s.key} (0 or 1)", 0, 1))
    return int(number(s, f"{s.key}: the socket buffer limit in bytes", *KERNEL_BYTES))


def names_ethernet(s: Setting) -> bool:
    v = s.value
    text = v.text if isinstance(v, (Name, String)) else None
    return text is not None and (text in ETHERNET_PHYS or text.startswith("ethernet:"))


def ethernet(s: Setting) -> str:
    """``ethernet = ethernet10;`` (or ``ethernet100``, ``"ethernet:<Mb/s>"``): the host's
    Ethernet interface."""
    v = s.value
    text = v.text if isinstance(v, (Name, String)) else None
    if text in ETHERNET_PHYS:
        return text
    lo, hi = vocab.ETHERNET_MBPS
    if text is not None and text.startswith("ethernet:"):
        try:
            mbps = float(text.removeprefix("ethernet:"))
        except ValueError:
            mbps = math.nan
        if lo <= mbps <= hi:
            return text
    raise expected(
        v.pos,
        render(v),
        f'an Ethernet interface: ethernet10, ethernet100 or "ethernet:<Mb/s>" ({lo:g}..{hi:g})',
    )


@dataclass(frozen=True)
class Key:
    """A testbed key: the record field it sets, how its value is read, and the run
    spec's key it becomes (None: the testbed's own, which the simulator never sees)."""

    field: str
    read: Reader
    spec: str | None = None


# --- host { } ----------------------------------------------------------------------------
#: A host's numbers keep their range check here (``spec_number``), not the core's alone:
#: a run spec holds only the hosts its connections use, so a host block for a host no
#: test uses (a preset's, the defaults) would pass out of range without a word.
HOST_KEYS: dict[str, Key] = {
    "profile": Key("profile", lambda s: choice(s, "a host profile", PROFILES), "profile"),
    "phy": Key(
        "phy",
        lambda s: choice(s, "a physical layer (or an Ethernet: ethernet10, ...)", PHYS),
        "phy",
    ),
    "distance_m": Key(
        "distance_m", spec_number("host", "distance_m", "the fibre length in metres"), "distance_m"
    ),
    "pdu_gap_us": Key(
        "pdu_gap_us",
        spec_number("host", "pdu_gap_us", "the adapter's gap between PDUs in µs"),
        "pdu_gap_us",
    ),
    "flavour": Key(
        "flavour", lambda s: choice(s, "a TCP flavour", tuple(FLAVOUR_MAX_SOCKBUF)), "flavour"
    ),
    "site": Key("site", site, "site"),
    "adapter": Key("adapter", lambda s: choice(s, "a host adapter", ADAPTERS), "adapter"),
    "spacing": Key("spacing", lambda s: choice(s, "an adapter spacing mode", SPACINGS), "spacing"),
    "spacing_us": Key(
        "spacing_us",
        off_or(
            spec_number("host", "spacing_us", "the adapter's cell spacing in µs"),
            f"the adapter's cell spacing in µs ({spec_range('host', 'spacing_us')})",
        ),
        "spacing_us",
    ),
    "stall": Key("stall", flag("stall"), "stall"),
    "pacing_counts": Key(
        "pacing_counts",
        lambda s: choice(s, "what the adapter's pacing rate counts", PACING_COUNTS),
        "pacing_counts",
    ),
    "address": Key("address", address),
    "ifq_pdus": Key(
        "ifq_pdus",
        spec_number("host", "tx_queue_pdus", "the adapter's interface queue in PDUs"),
        "tx_queue_pdus",
    ),
    "ethernet": Key("ethernet", ethernet, "ethernet"),
    "ethernet_duplex": Key(
        "ethernet_duplex",
        spec_choice("host", "ethernet_duplex", "an Ethernet duplex"),
        "ethernet_duplex",
    ),
    "interface": Key(
        "interface",
        lambda s: choice(s, "the interface the host's connections use", INTERFACES),
    ),
    "ethernet_name": Key("ethernet_name", site),
    **{k: Key("kernel", kernel_value) for k in KERNEL_SYSCTLS},
}
#: Host settings of its ATM adapter: nothing to set on a host on an Ethernet only.
ATM_ADAPTER_KEYS = ("spacing_us", "spacing", "adapter", "pdu_gap_us", "pacing_counts", "stall")


def unknown(s: Setting, where: str, keys) -> ExperimentError:
    return expected(s.pos, f"key '{s.key}'", f"a {where} key: {', '.join(keys)}")


def host(block: Block, h: HostSpec, positions: dict) -> HostSpec:
    """A ``host NAME { }`` (or ``defaults { }``) block's settings onto ``h``; each value's
    position under ``("host", name, spec key)`` in ``positions``."""
    interface_pos: Pos | None = None
    #: This block's settings by key (the last of each), for the checks after them all.
    given: dict[str, Setting] = {}
    for s in block.settings():
        given[s.key] = s
        key = HOST_KEYS.get(s.key)
        if key is None:
            raise unknown(s, "host", HOST_KEYS)
        if s.key == "phy" and names_ethernet(s):
            # ``phy = ethernet10`` (issue 22's spelling): a host on an Ethernet only, its
            # connections over it; the same as ``ethernet = ethernet10; interface =
            # ethernet;`` (a multi-homed host names both interfaces instead).
            h.ethernet = ethernet(s)
            h.interface = "ethernet"
            positions[("host", h.name, "ethernet")] = refused_at(s)
            continue
        value = key.read(s)
        if key.field == "kernel":
            h.kernel = {**h.kernel, s.key: value}
        else:
            setattr(h, key.field, value)
        if key.spec is not None:
            positions[("host", h.name, key.spec)] = refused_at(s)
        if s.key in ("interface", "ethernet_name"):
            interface_pos = s.value.pos
    if (h.interface == "ethernet" or h.ethernet_name) and h.ethernet is None:
        what = "interface = ethernet" if h.interface == "ethernet" else "ethernet_name"
        raise expected(
            interface_pos or block.pos,
            f"{what} on host {h.name}",
            "an Ethernet interface to use: ethernet = ethernet10 (or ethernet100, "
            '"ethernet:<Mb/s>")',
        )
    _check_adapter_settings(h, given)
    return h


def _check_adapter_settings(h: HostSpec, given: dict[str, Setting]) -> None:
    """An ATM adapter's settings on a host whose connections use its Ethernet do
    nothing; cell-burst spacing keeps a mean spacing, which it needs."""
    atm = [given[k] for k in ATM_ADAPTER_KEYS if k in given]
    if h.interface == "ethernet" and atm and h.name != "*":
        s = atm[0]
        raise expected(
            s.pos,
            f"{s.key} = {render(s.value)} on host {h.name}, whose connections use its "
            f"Ethernet ({h.ethernet})",
            "ATM adapter settings on a host whose connections use ATM (phy = oc3c, ...; "
            "or interface = atm)",
        )
    s = given.get("spacing")
    if s is not None and h.spacing == "cell-burst" and h.spacing_us is None:
        raise expected(
            s.pos,
            f"spacing = cell-burst on host {h.name} without a spacing",
            "spacing_us = US too: the mean cell spacing its bursts keep (ENI driver 2.3.0)",
        )


# --- switch [SITE] { } -------------------------------------------------------------------
def _abr(s: Setting) -> dict | None:
    """``abr = efci (...)`` (experiment/abr.py: efci, relative, erica), or ``none``: a
    site's switch without the testbed's ABR behaviour."""
    if isinstance(s.value, Name) and s.value.text == "none":
        return None
    return abrmod.switch(s)


#: ``epd_threshold_share``: EPD's threshold as a share of the buffer, so that a sweep of
#: buffer_cells keeps EPD's headroom in proportion (reproduce/ubr.py); a share in (0, 1].
def _share(s: Setting) -> float:
    v = s.value
    x = number(s, "the EPD threshold as a share of buffer_cells", 0.0, 1.0, False)
    if x == 0:
        raise expected(v.pos, f"epd_threshold_share {x:g}", "a share in (0, 1]")
    return float(x)


SWITCH_KEYS: dict[str, Key] = {
    "buffer_cells": Key(
        "buffer_cells",
        spec_type("switch", "buffer_cells", "cells per output port"),
        "buffer_cells",
    ),
    "policy": Key("policy", lambda s: choice(s, "a drop policy", POLICIES), "policy"),
    # The range here, not the core's alone: the core reads the threshold only under
    # policy = epd, so 0 under tail-drop or ppd would pass without a word.
    "epd_threshold_cells": Key(
        "epd_threshold_cells",
        spec_number("switch", "epd_threshold_cells", "the EPD threshold in cells"),
        "epd_threshold_cells",
    ),
    "epd_threshold_share": Key("_epd_share", _share, "epd_threshold_cells"),
    "clp1_threshold_cells": Key(
        "clp1_threshold_cells",
        off_or(
            spec_type("switch", "clp1_threshold_cells", "a CLP-1 threshold in cells"),
            "a CLP-1 threshold in cells (a whole number)",
        ),
        "clp1_threshold_cells",
    ),
    "flow_control": Key(
        "flow_control",
        lambda s: choice(s, "hop-by-hop flow control", FLOW_CONTROLS),
        "flow_control",
    ),
    "credits": Key(
        "credits",
        spec_type("switch", "credits", "credits per VC per hop (cells)"),
        "credits",
    ),
    "abr": Key("abr", _abr, "abr"),
}


def switch(b: Block, sw: dict, site: str | None, positions: dict) -> None:
    """A ``switch [SITE] { }`` block's settings into ``sw`` (only the keys it sets; the
    run spec's defaults stand for the others); each value's position under
    ``("switch", site, spec key)``. ``epd_threshold_share`` is kept as ``_epd_share``
    until the buffer is known (``block.resolve_shares``)."""
    for s in b.settings():
        key = SWITCH_KEYS.get(s.key)
        if key is None:
            raise unknown(s, "switch", SWITCH_KEYS)
        value = key.read(s)
        if key.field == "abr" and value is None:
            sw.pop("abr", None)
        else:
            sw[key.field] = value
        assert key.spec is not None
        positions[("switch", site, key.spec)] = refused_at(s)
    if sw.get("flow_control") == FLOW_CONTROLS[0]:
        # ``flow_control = none``: the switch without it, and without the credits it
        # took from the testbed's switch (credits this block sets the core refuses).
        del sw["flow_control"]
        if setting_pos(b, "credits") is None:
            sw.pop("credits", None)


# --- trunk { } ---------------------------------------------------------------------------
TRUNK_KEYS: dict[str, Key] = {
    "from": Key("from", site, "from"),
    "to": Key("to", site, "to"),
    "phy": Key("phy", lambda s: choice(s, "a physical layer", PHYS), "phy"),
    "delay_ms": Key(
        "delay_ms", spec_type("trunk", "delay_ms", "the one-way delay in ms"), "delay_ms"
    ),
    "upc_t_us": Key(
        "t_us", spec_type("upc", "t_us", "the UPC's GCRA increment T in µs"), "upc.t_us"
    ),
    "upc_tau_us": Key("tau_us", spec_type("upc", "tau_us", "its tolerance τ in µs"), "upc.tau_us"),
    "upc_action": Key("action", spec_choice("upc", "action", "a UPC action"), "upc.action"),
}


def trunk(block: Block, index: int, positions: dict) -> dict:
    """``trunk { from = west; to = east; phy = oc3c; delay_ms = 4.4; }``: a link between
    two sites' switches (an output port each way), the testbed's ``index``-th."""
    t: dict = {"phy": vocab.DEFAULTS["trunk"]["phy"]}
    upc: dict = {}
    for s in block.settings():
        key = TRUNK_KEYS.get(s.key)
        if key is None:
            raise unknown(s, "trunk", TRUNK_KEYS)
        (upc if s.key.startswith("upc_") else t)[key.field] = key.read(s)
        positions[("trunk", index, key.spec)] = refused_at(s)
    if upc:
        if "t_us" not in upc or "tau_us" not in upc:
            raise expected(block.pos, "trunk { }", "both upc_t_us and upc_tau_us for a UPC")
        t["upc"] = upc
    for key in ("from", "to", "delay_ms"):
        if key not in t:
            raise expected(block.pos, "trunk { }", f"a trunk with {key} = ...")
    if t["from"] == t["to"]:
        raise expected(
            setting_pos(block, "to") or block.pos,
            f"trunk from {t['from']} to itself",
            "two different sites",
        )
    return t


def refused_at(s: Setting) -> Pos:
    """Where a core refusal of the setting's value lands (``Testbed.positions``): the
    setting, or its value where that stands elsewhere (a sweep's list, ``--set``), so
    that a refusal names where the value was written, not the value it replaced."""
    v = s.value.pos
    return s.pos if (v.file, v.line) == (s.pos.file, s.pos.line) else v


def setting_pos(b: Block, *keys: str) -> Pos | None:
    """Where the block's last setting of one of ``keys`` is written, if any."""
    found = [s.pos for s in b.settings() if s.key in keys]
    return found[-1] if found else None
