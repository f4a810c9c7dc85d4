"""A testbed from its block: ``testbed [PRESET] { ... }`` read key by key
(``keys.py``) onto a preset (``presets.py``), with the checks that span blocks (a
trunk's sites, the Ethernet interfaces' names); ``--testbed``'s file or preset.
"""

from __future__ import annotations

import copy
import os

from cellbench import vocab
from cellbench.experiment.lang import (
    Block,
    Document,
    ExperimentError,
    List,
    Name,
    Pos,
    Setting,
    expected,
    parse,
    read,
    render,
)
from cellbench.experiment.testbed import keys
from cellbench.experiment.testbed.presets import PRESETS, Written
from cellbench.experiment.testbed.schema import (
    ENCAPS,
    SWITCH_DEFAULTS,
    HostSpec,
    Testbed,
)

#: The testbed block's own keys, besides its blocks.
TESTBED_KEYS = ("mtu", "encap", "hosts")


def preset(name: str, pos: Pos | None = None) -> Testbed:
    """The named preset (``PRESETS``), a fresh copy; one written in the testbed language
    is read here, as any block."""
    if name not in PRESETS:
        raise ExperimentError(
            pos, f"found testbed preset {name!r}, expected one of {', '.join(sorted(PRESETS))}"
        )
    made = PRESETS[name]()
    if isinstance(made, Written):
        doc = parse(f"testbed {{\n{made.text}\n}}", f"<testbed preset {name}>")
        tb = from_block(
            doc.blocks[0], Testbed(name=name, description=made.description, pair=made.pair)
        )
        # A preset's hosts and defaults are the testbed's, not a user's blocks.
        tb.given, tb.defaults_written = {}, False
    else:
        tb = made
    if name == "lan":
        tb.name = "lan"
    return tb


def from_block(block: Block, base: Testbed | None = None) -> Testbed:
    """A testbed from a ``testbed [PRESET] { ... }`` block (checked against the schema)."""
    if block.name is not None and base is not None:
        # --testbed replaces the preset the file names (model.build notes it); a
        # misspelt name is still an error.
        preset(block.name, block.name_pos)
        tb = copy.deepcopy(base)
        tb.pos = block.name_pos
    elif block.name is not None:
        tb = preset(block.name, block.name_pos)
        tb.pos = block.name_pos
    else:
        # No preset named: start from the command line's testbed, else lan-buffers.
        tb = copy.deepcopy(base) if base is not None else preset("lan-buffers")
    _settings(block, tb)
    # A site's switch block changes only what it says; resolved once the testbed-wide
    # block (wherever it stands) is known.
    site_blocks: list[Block] = []
    # Connections take the first trunk between two sites: a second is never used.
    joined = {frozenset((t["from"], t["to"])): f"testbed {tb.name}'s trunk" for t in tb.trunks}
    new_trunks: list[tuple[dict, Block]] = []
    for b in block.blocks():
        if b.kind == "switch" and b.name is not None:
            site_blocks.append(b)
        elif b.kind == "switch":
            keys.switch(b, tb.switch, None, tb.positions)
        elif b.kind == "trunk":
            t = keys.trunk(b, len(tb.trunks), tb.positions)
            pair = frozenset((t["from"], t["to"]))
            if pair in joined:
                raise expected(
                    b.pos,
                    f"a second trunk between {t['from']} and {t['to']}",
                    f"one per pair of sites: {joined[pair]} joins them already and every "
                    "connection takes it (this one would change nothing)",
                )
            joined[pair] = f"the trunk at {b.pos}"
            tb.trunks.append(t)
            new_trunks.append((t, b))
        elif b.kind == "defaults":
            start = copy.copy(tb.defaults) if tb.defaults else HostSpec(name="*")
            tb.defaults = keys.host(b, start, tb.positions)
            tb.defaults_written = True
        elif b.kind == "host":
            assert b.name is not None
            # Keys the block leaves out come from the preset's entry, else from defaults.
            start = tb.hosts.get(b.name) or (
                copy.copy(tb.defaults) if tb.defaults else HostSpec(name=b.name)
            )
            start.name = b.name
            tb.hosts[b.name] = keys.host(b, start, tb.positions)
            tb.given[b.name] = b.name_pos or b.pos
    _check_ethernet_names(block, tb)
    _check_trunk_sites(tb, new_trunks)
    _site_switches(tb, site_blocks)
    for sw in (tb.switch, *tb.sites.values()):
        _resolve_share(sw)
    return tb


def _settings(block: Block, tb: Testbed) -> None:
    """The testbed block's own settings: the IP MTU, the encapsulation, the hosts' order."""
    mtu_pos: Pos | None = None
    for s in block.settings():
        if s.key == "mtu":
            tb.mtu = int(
                keys.number(s, "the IP MTU in bytes", *vocab.spec_range("connection", "mtu"))
            )
            mtu_pos = s.value.pos
            # Every connection's mtu: a refusal of one lands here (model.refusals).
            tb.positions[("connection", None, "mtu")] = s.pos
        elif s.key == "encap":
            tb.encap = keys.choice(s, "an encapsulation", ENCAPS)
            tb.positions[("connection", None, "encap")] = s.pos
        elif s.key == "hosts":
            tb.order, tb.order_pos = _host_names(s), s.pos
        else:
            raise keys.unknown(s, "testbed", TESTBED_KEYS + ("switch { }", "host NAME { }"))
    # The core refuses it too, per connection; here it is the testbed's one setting.
    least, most = vocab.MTU_RANGE[0], vocab.MTU_RANGE[1] - vocab.ENCAP_HEADER[tb.encap]
    if mtu_pos is not None and tb.mtu > most:
        raise expected(
            mtu_pos,
            f"mtu = {tb.mtu}",
            f"an MTU of {least}..{most}: what one AAL5 PDU carries with {tb.encap} "
            f"({vocab.ENCAP_HEADER[tb.encap]} bytes of header)",
        )


def _site_switches(tb: Testbed, site_blocks: list[Block]) -> None:
    """Each ``switch SITE { }``: the testbed's switch with the block's settings, at a site
    the testbed has."""
    sites = {h.site for h in tb.hosts.values()} | {
        x for t in tb.trunks for x in (t["from"], t["to"])
    }
    if tb.defaults is not None:
        sites.add(tb.defaults.site)
    for b in site_blocks:
        assert b.name is not None
        if b.name not in sites:
            raise expected(
                b.name_pos or b.pos,
                f"switch {b.name}",
                f"a site of the testbed: {', '.join(sorted(sites)) or 'none'}",
            )
        tb.sites[b.name] = sw = dict(tb.sites.get(b.name) or tb.switch)
        keys.switch(b, sw, b.name, tb.positions)


def _resolve_share(sw: dict) -> None:
    """``epd_threshold_share``: EPD's threshold as that share of the switch's buffer."""
    share = sw.pop("_epd_share", None)
    if share is not None:
        buffer = sw.get("buffer_cells", SWITCH_DEFAULTS["buffer_cells"])
        sw["epd_threshold_cells"] = max(1, round(share * buffer))


def _check_trunk_sites(tb: Testbed, trunks: list[tuple[dict, Block]]) -> None:
    """A trunk joins sites with hosts, or a transit site on two trunks or more (the
    hub of a star); one to a site nothing else reaches carries nothing: a misspelt site."""
    hosted = {h.site for h in tb.hosts.values()}
    if tb.defaults is not None:
        hosted.add(tb.defaults.site)
    ends = [x for t in tb.trunks for x in (t["from"], t["to"])]
    for t, b in trunks:
        for key in ("from", "to"):
            site = t[key]
            if site not in hosted and ends.count(site) < 2:
                known = ", ".join(sorted(hosted | {x for x in ends if ends.count(x) > 1}))
                raise expected(
                    keys.setting_pos(b, key) or b.pos,
                    f"{key} = {site}, a site with no host and no other trunk",
                    f"a site of the testbed ({known}): a trunk to nowhere else carries nothing",
                )


def _host_names(s: Setting) -> list[str]:
    """``hosts = [a, b, ...]``: host names, each once (checked against the testbed's
    hosts where the experiment is built: a host block may come after)."""
    items = s.value.items if isinstance(s.value, List) else [s.value]
    names: list[str] = []
    for v in items:
        if not isinstance(v, Name) or v.text in names:
            raise expected(v.pos, render(v), "a list of host names, each once: [a, b, ...]")
        names.append(v.text)
    return names


def _check_ethernet_names(block: Block, tb: Testbed) -> None:
    """An Ethernet interface's name is its own: no host's, no other interface's."""
    seen: dict[str, str] = {}
    for h in tb.hosts.values():
        n = h.ethernet_name
        if n is None:
            continue
        if n in tb.hosts or n in seen:
            other = f"host {n}" if n in tb.hosts else f"host {seen[n]}'s Ethernet interface"
            where = [
                keys.setting_pos(b, "ethernet_name")
                for b in block.blocks()
                if b.kind == "host" and b.name == h.name
            ]
            raise expected(
                next((w for w in where if w is not None), block.pos),
                f"ethernet_name = {n} on host {h.name}",
                f"a name of its own ({other} has it)",
            )
        seen[n] = h.name


def load(spec: str) -> Testbed:
    """``--testbed``: a preset name, or a file holding one ``testbed { }`` block."""
    if spec in PRESETS:
        return preset(spec)
    try:
        os.stat(spec)  # (not open: a FIFO's open waits for a writer; read() refuses it)
    except (OSError, ValueError) as e:
        raise ExperimentError(
            None,
            f"testbed {spec!r}: neither a preset ({', '.join(sorted(PRESETS))}) "
            f"nor a readable file ({getattr(e, 'strerror', None) or e})",
        ) from None
    text = read(spec, spec, "the testbed")
    doc = parse(text, spec)
    return from_document(doc, required=True)


def from_document(
    doc: Document, required: bool = False, base: Testbed | None = None
) -> Testbed | None:
    blocks = [b for b in doc.blocks if b.kind == "testbed"]
    if len(blocks) > 1:
        raise expected(blocks[1].pos, "a second 'testbed' block", "one testbed per experiment")
    others = [b for b in doc.blocks if b.kind != "testbed"]
    if required:
        if others:
            raise expected(others[0].pos, f"'{others[0].kind}'", "only a 'testbed' block")
        if not blocks:
            raise ExperimentError(Pos(doc.file, 1, 1), "found no 'testbed' block, expected one")
    return from_block(blocks[0], base) if blocks else None
