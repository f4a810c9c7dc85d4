"""The testbed's hosts as the tests use them: host blocks no test runs on (a
misspelling refused, any other noted) and addresses naming a host's Ethernet
interface.
"""

from __future__ import annotations

import difflib
from dataclasses import replace

from cellbench.experiment import testbed as tbmod
from cellbench.experiment.lang import Document, List, Pos, expected, render

#: How alike (difflib's ratio) an unused host block's name and a used host's must be
#: to call it a misspelling: one character of an 8-character name differs at 0.875.
MISSPELT = 0.8


def _meant(name: str, used: set[str]) -> str | None:
    """The host of the tests a host block's name most likely means: one the name is
    the stem of (``ipc2`` for ``ipc2.atm``: host names include the interface), else
    a close spelling (``ipc1.atn``)."""
    stems = sorted(u for u in used if u.startswith(name + "."))
    if stems:
        return stems[0]
    close = difflib.get_close_matches(name, sorted(used), n=1, cutoff=MISSPELT)
    return close[0] if close else None


def check_host_blocks(
    doc: Document, used: set[str], base: tbmod.Testbed | None = None
) -> list[str]:
    """A ``host NAME { }`` that no test runs on (at any point of the sweep) changes
    nothing. In the file's testbed block, or among the host blocks of a ``--testbed``
    file (``base``, the testbed it puts in the preset's place; ``Testbed.given``): one
    whose name is the stem of a host a test runs on (``ipc2`` for ``ipc2.atm``) or close
    to one (``ipc1.atn``) is refused at its position, and so is one in a preset's block
    (``testbed lan-buffers { host zz { } }``) that names no host of the preset; any
    other is returned as a note naming the hosts the tests use (a testbed may describe
    hosts no test uses: a real testbed's addresses). A name in ``hosts = [...]``, which
    orders the tests' hosts, must be one of them."""
    hosts = ", ".join(sorted(used))
    notes: list[str] = []

    def judge(name: str, pos: Pos | None, preset_hosts: set[str] | None, testbed: str) -> None:
        meant = _meant(name, used)
        if meant is not None:
            raise expected(
                pos,
                f"host {name}, on which no test runs",
                f"a host of the tests ({hosts}): is it {meant}? "
                "A host block for any other changes nothing",
            )
        if preset_hosts is not None and name not in preset_hosts:
            raise expected(
                pos,
                f"host {name}, a host of neither testbed {testbed} nor the tests",
                f"one of them ({', '.join(sorted(preset_hosts | used))}): a host block "
                "for any other changes nothing",
            )
        notes.append(
            f"{pos}: host {name}: no test runs on it, so its block changes nothing "
            f"(the tests run on {hosts})"
        )

    for tb in (b for b in doc.blocks if b.kind == "testbed"):
        preset_hosts: set[str] | None = None
        if base is not None:
            preset_hosts = set(base.hosts)
        elif tb.name in tbmod.PRESETS:
            preset_hosts = set(tbmod.preset(tb.name).hosts)
        for st in tb.settings():
            items = st.value.items if isinstance(st.value, List) else [st.value]
            for v in items if st.key == "hosts" else []:
                if render(v) not in used:
                    raise expected(
                        v.pos,
                        f"host {render(v)} in hosts = [...], on which no test runs",
                        f"hosts of the tests ({hosts}): the list orders them",
                    )
        for b in tb.blocks():
            if b.kind == "host" and b.name is not None and b.name not in used:
                name = base.name if base is not None else tb.name
                judge(b.name, b.name_pos or b.pos, preset_hosts, name)
    for name, pos in (base.given if base is not None else {}).items():
        if name not in used:
            judge(name, pos, None, base.name)
    return notes


def _resolve_interfaces(eps, testbed: tbmod.Testbed) -> None:
    """Addresses that name a host's Ethernet interface by its ``ethernet_name``
    (``own = ipc1-le:20``) become that host's, marked ``ethernet``; the others name
    the host, whose ``interface`` setting says which of its interfaces they use."""
    alias = {h.ethernet_name: h.name for h in testbed.hosts.values() if h.ethernet_name}
    if not alias:
        return
    for ep in eps:
        for k in ("own", "peer"):
            hp = getattr(ep, k)
            if hp.host in alias:
                setattr(ep, k, replace(hp, host=alias[hp.host], interface="ethernet"))
