"""The run spec through the simulator's own checks before anything runs, a refusal
mapped back onto the file: the connection, host or trunk setting it names.
"""

from __future__ import annotations

import re

from cellbench import _native
from cellbench.experiment.lang import Block, ExperimentError, Pos, parse, render
from cellbench.experiment.model.records import Experiment
from cellbench.experiment.model.tester import check_tester


def check_with_engine(exp: Experiment, seed: int) -> None:
    """The run's spec through the simulator's own checks, without running it: what
    this package does not check yet is still refused before the first run, at the test
    of the connection it names (``connection I (A -> B): ...``)."""
    try:
        _native.check_spec(exp.spec(seed, 0))
        if exp.tester is not None:
            check_tester(exp, exp.tester, exp.tester_pos)
    except ExperimentError:
        raise
    except ValueError as e:
        text = str(e)
        m = re.match(r"(?:connection|transfer) (\d+)\b", text)
        conns = exp.connections
        pos = conns[int(m.group(1))].pos if m and int(m.group(1)) < len(conns) else None
        raise ExperimentError(
            pos or _testbed_pos(exp, text) or Pos(exp.file, 1, 1),
            f"the simulator refuses it: {text}",
        ) from None


#: A simulator refusal of a host's or a trunk's value (its words) -> the setting.
_HOST_WORDS = (
    ("cell interval", "spacing_us"), ("PDU gap", "pdu_gap_us"), ("spacing", "spacing"),
    ("distance", "distance_m"), ("tx_queue_pdus", "ifq_pdus"), ("pacing_counts", "pacing_counts"),
    ("adapter", "adapter"), ("ethernet_duplex", "ethernet_duplex"), ("Ethernet", "ethernet"),
)  # fmt: skip
_TRUNK_WORDS = (("UPC T", "upc_t_us"), ("UPC τ", "upc_tau_us"), ("delay", "delay_ms"))


def _testbed_pos(exp: Experiment, text: str) -> Pos | None:
    """Where the file sets what a simulator refusal names (``host "a": cell interval
    ...``, ``trunk 0 (w -> e): UPC T ...``): the setting in the host's block (or the
    defaults block) or the trunk's, else that block, else the testbed block; None
    when the refusal names no host or trunk of the file."""
    host = re.match(r'host "([^"]+)": (.*)', text)
    trunk = re.match(r"trunk \d+ \((\S+) -> (\S+)\): (.*)", text)
    if not (host or trunk):
        return None
    try:
        doc = parse(exp.text, exp.file)
    except ExperimentError:
        return None
    testbeds = [b for b in doc.blocks if b.kind == "testbed"]
    if not testbeds:
        return None
    inner = testbeds[0].blocks()
    if host:
        name, rest = host.groups()
        blocks = [b for b in inner if b.kind == "host" and b.name == name]
        blocks += [b for b in inner if b.kind == "defaults"]
        words = _HOST_WORDS
    else:
        a, b_, rest = trunk.groups()

        def joins(b: Block) -> bool:
            ends = {s.key: s.value for s in b.settings() if s.key in ("from", "to")}
            return {render(v) for v in ends.values()} == {a, b_}

        blocks = [b for b in inner if b.kind == "trunk" and joins(b)]
        words = _TRUNK_WORDS
    for b in blocks:
        for phrase, key in words:
            if phrase in rest:
                found = [st for st in b.settings() if st.key == key]
                if found:
                    return found[-1].pos
    return blocks[0].pos if blocks else testbeds[0].name_pos or testbeds[0].pos
