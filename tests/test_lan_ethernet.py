"""Frame links in the experiment language and lan-buffers' Ethernet parts
(docs/lan-buffers.md, docs/mechanisms.md): the hosts' Ethernet interfaces beside their
ATM adapters, the errors a bad one gets, and `reproduce lan-buffers --part ftp` and
`--part ethernet-footnote` end to end."""

from __future__ import annotations

import json

import pytest

import cellbench
from cellbench import _native, vocab
from cellbench.cli import main
from cellbench.experiment import lang, model, sweep
from cellbench.experiment.lang import ExperimentError
from cellbench.reproduce import lan_ethernet

#: Two IPCs with an Ethernet beside TAXI; one connection over the interface TX/RX name.
TWO = """
testbed lan-buffers {{
    host ipc1 {{ {h1} }}
    host ipc2 {{ {h2} }}
}}
cluster {{
    test tx {{ type = full (blocksize=8K, nbytes=1M); protocol = tcp (sndbuf=16K);
              own = {tx}:20; peer = {rx}:20; }}
    test rx {{ type = sink (blocksize=8K); protocol = tcp (rcvbuf=16K);
              own = {rx}:20; peer = {tx}:20; }}
}}
"""
ETHER = "ethernet = ethernet10; ethernet_name = {n}-le;"


def build(text: str) -> model.Experiment:
    doc = lang.parse(text, "x.netspec")
    sw = sweep.from_document(doc)
    [point] = list(sw.points())
    return model.build(sweep.apply(doc, point, sw.params))


def two(h1: str = ETHER.format(n="ipc1"), h2: str = ETHER.format(n="ipc2"), **kw) -> str:
    return TWO.format(h1=h1, h2=h2, tx=kw.get("tx", "ipc1-le"), rx=kw.get("rx", "ipc2-le"))


def error(text: str) -> str:
    with pytest.raises(ExperimentError) as e:
        model.check_with_engine(build(text), 1)
    return str(e.value)


def test_an_interface_name_picks_the_ethernet_the_host_name_the_atm_adapter():
    ether = build(two())
    [c] = ether.connections
    assert (c.transmitter, c.receiver, c.interface) == ("ipc1", "ipc2", "ethernet")
    spec = ether.spec(1, 0)
    [conn] = spec["connections"]
    # No MTU sent: over Ethernet the core takes Ethernet II's.
    assert conn["interface"] == "ethernet" and "mtu" not in conn
    assert vocab.ETHERNET_MTU == 1500
    assert {h["name"]: h["ethernet"] for h in spec["hosts"]} == {
        "ipc1": "ethernet10",
        "ipc2": "ethernet10",
    }
    atm = build(two(tx="ipc1", rx="ipc2"))
    [conn] = atm.spec(1, 0)["connections"]
    # The testbed's MTU is VC-mux's, the core's default: not sent either.
    assert "interface" not in conn and "mtu" not in conn
    assert atm.testbed.mtu == vocab.ENCAP_MTU[atm.testbed.encap] == 9188
    # One machine, two interfaces: the same hosts in both runs, different links.
    out = _native.simulate(ether.spec(1, 0))
    [e] = out["connections"]
    [a] = _native.simulate(atm.spec(1, 0))["connections"]
    assert e["throughput_bps"] < 9.4928e6 < a["throughput_bps"]
    assert "Ethernet segment (10 Mb/s, half duplex" in e["limit_evidence"]
    assert all(p["cells_in"] == 0 for p in out["ports"])


def test_phy_ethernet10_is_a_host_on_an_ethernet_only():
    """Issue 22's spelling, ``phy = ethernet10``: the same spec as ``ethernet = ethernet10;
    interface = ethernet;``; a name that is neither a cell phy nor an Ethernet is refused."""
    short = build(two("phy = ethernet10;", "phy = ethernet10;", tx="ipc1", rx="ipc2"))
    both = "ethernet = ethernet10; interface = ethernet;"
    long = build(two(both, both, tx="ipc1", rx="ipc2"))
    assert short.spec(1, 0) == long.spec(1, 0)
    [conn] = short.spec(1, 0)["connections"]
    assert conn["interface"] == "ethernet" and "mtu" not in conn
    assert "expected a physical layer (or an Ethernet: ethernet10, ...)" in error(
        two("phy = ethernet7;", "phy = ethernet10;", tx="ipc1", rx="ipc2")
    )


@pytest.mark.parametrize(
    "h1, kw, message",
    [
        (
            "ethernet = ethernet7;",
            {},
            "x.netspec:3:28: found ethernet7, expected an Ethernet interface: ethernet10, "
            'ethernet100 or "ethernet:<Mb/s>"',
        ),
        (
            'ethernet = "ethernet:0";',
            {},
            'x.netspec:3:28: found "ethernet:0", expected an Ethernet interface',
        ),
        (
            "interface = ethernet;",
            {"tx": "ipc1"},
            "x.netspec:3:29: found interface = ethernet on host ipc1, expected an Ethernet "
            "interface to use: ethernet = ethernet10",
        ),
        (
            "ethernet = ethernet10; ethernet_duplex = quarter;",
            {},
            "x.netspec:3:58: found quarter, expected an Ethernet duplex: one of half, full",
        ),
        (
            "ethernet = ethernet10; interface = token-ring;",
            {},
            "x.netspec:3:52: found token-ring, expected the interface the host's connections "
            "use: one of atm, ethernet",
        ),
        (
            "ethernet = ethernet10; ethernet_name = ipc2-le;",
            {},
            "found ethernet_name = ipc2-le on host ipc2, expected a name of its own "
            "(host ipc1's Ethernet interface has it)",
        ),
    ],
)
def test_bad_ethernet_settings_name_file_line_and_value(h1, kw, message):
    assert message in error(two(h1=h1, **kw))


def test_a_connection_from_an_ethernet_to_an_atm_interface_is_refused():
    msg = error(two(rx="ipc2"))
    assert "x.netspec:8:40: found peer = ipc2:20 (ipc2's atm interface)" in msg, msg
    assert "both ends on one network" in msg


def test_the_simulator_refuses_an_ethernet_rate_per_site():
    msg = error(two(h2="ethernet = ethernet100; ethernet_name = ipc2-le;"))
    assert msg.startswith("x.netspec:"), msg
    assert "one segment per site, one rate" in msg


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    out = tmp_path_factory.mktemp("lan-ethernet")
    # Each part's rows as the study's --json lists them.
    return out, {
        p.replace("-", "_"): cellbench.reproduce("lan-buffers", p, out=out).to_dict("records")
        for p in lan_ethernet.PARTS
    }


def test_footnote_3k_send_6k_receive_locks_3k_3k_and_6k_6k_do_not(parts):
    _, res = parts
    rows = res["ethernet_footnote"]
    by: dict[tuple[int, int], list[dict]] = {}
    for r in rows:
        assert r["interface"] == "ethernet" and r["mss"] == 1460
        by.setdefault((r["send_buffer"], r["recv_buffer"]), []).append(r)
    assert sorted(by) == [(3072, 3072), (3072, 6144), (6144, 3072), (6144, 6144)]
    locked = by[(3072, 6144)]
    assert len(locked) == 5
    assert all(r["lockstep"] and r["limited_by"] == "lockstep" for r in locked)
    for key in ((3072, 3072), (6144, 6144)):
        assert not any(r["lockstep"] for r in by[key])
        # Flowing, at many times the locked rate (the lock-step releases ~2 KB a tick).
        assert min(r["throughput_bps"] for r in by[key]) > 20 * max(
            r["throughput_bps"] for r in locked
        )


def test_ftp_over_ethernet_and_over_atm_with_their_default_buffers(parts):
    out, res = parts
    rows = res["ftp"]
    ether = [r for r in rows if r["interface"] == "ethernet"]
    atm = [r for r in rows if r["interface"] == "atm"]
    assert len(ether) == len(atm) == 5
    for r in ether:
        assert (r["send_buffer"], r["recv_buffer"], r["mss"]) == (16384, 16384, 1460)
        assert r["bytes"] == 4613734
        # Below what 1460-byte segments get from 10 Mb/s frames, preamble to gap.
        assert r["throughput_bps"] < 9.4928e6
    for r in atm:
        assert (r["send_buffer"], r["recv_buffer"], r["mss"]) == (16384, 16384, 9148)
    assert min(r["throughput_bps"] for r in atm) > max(r["throughput_bps"] for r in ether)
    # Stored like any study's part: cellbench show reads it.
    assert (out / "ftp" / "result.json").is_file()
    # ftp's sender writes BUFSIZ (1 KB) at a time, as 4.3BSD's ftpd and ftp do.
    from cellbench.experiment import results

    stored = results.load(out / "ftp").to_pandas()
    senders = stored[stored.test.isin(["ftp-ethernet", "ftp-atm"])]
    assert len(senders) == 10 and set(senders.writes) == {-(-4613734 // 1024)}
    assert (out / "ethernet-footnote" / "result.json").is_file()


def test_reproduce_part_prints_the_tables_with_what_limited_each_row(capsys):
    assert main(["reproduce", "lan-buffers", "--part", "ethernet-footnote"]) == 0
    text = capsys.readouterr().out
    assert "limited by" in text and "lockstep" in text
    assert "as the footnote predicts" in text
    assert main(["reproduce", "lan-buffers", "--part", "ftp", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {r["interface"] for r in doc["ftp"]} == {"ethernet", "atm"}
    assert all(r["limited_by"] for r in doc["ftp"])


def test_grid_options_do_not_apply_to_a_part(capsys):
    assert main(["reproduce", "lan-buffers", "--part", "ftp", "--send-buffer", "16K"]) == 2
    assert "--send-buffer: for the buffer grid, not for --part ftp" in capsys.readouterr().err


def test_the_emulator_refuses_a_test_over_ethernet_and_notes_ignored_interfaces():
    from cellbench.engines.emu import engine

    ether = build(two())
    with pytest.raises(ExperimentError, match="test tx runs over the hosts' Ethernet"):
        engine.check_frames(ether)
    atm = build(two(tx="ipc1", rx="ipc2"))
    engine.check_frames(atm)
    [note] = [n for n in engine.notes(atm) if "Ethernet" in n]
    assert "ipc1, ipc2 are ignored: the emulator carries cells only" in note


def test_ftp_over_atm_locks_near_the_published_rate_only_with_a_larger_receive_buffer():
    """000 §1's ATM figure (0.366 Mbit/s) is a lock-step's: at 000 §2.2's default 16K/16K
    ftp's 1 KB writes flow; the assumed receive buffers above 16K lock, some at about 8 KB
    per 200 ms tick (--envelope: inside, at which values)."""
    from cellbench.reproduce import envelope

    envs = {e.id: e for e in envelope.run(seed=1, workers=2, only={("lan-buffers", "ftp")})}
    atm = envs["000-ftp-atm"]
    assert atm.default > 10  # flowing at the defaults
    assert atm.where == "inside the envelope"
    assert atm.at and all(c["atm_rcvbuf"] != "16K" for c in atm.at)
    assert all(c["atm_sndbuf"] == "16K" for c in atm.at)
    # The Ethernet figure stays out of reach: no buffer or read size the file allows
    # brings the model's Nagle-bound transfer down to 000's 1.313.
    ether = envs["000-ftp-ethernet"]
    assert ether.where == "outside the envelope" and ether.low > 2 * 1.313
