"""wan-contention (docs/wan-contention.md): the mechanisms each part reproduces, end to end."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from cellbench.cli import main
from cellbench.reproduce import study, wan_contention
from cellbench.reproduce.wan_contention import (
    common,
    five_pairs,
    flow_control,
    flow_control_five_pairs,
)
from cellbench.reproduce.wan_contention import offered_load as load

if TYPE_CHECKING:
    import pandas as pd


def document(*parts: str) -> dict:
    """The study's JSON document (``reproduce wan-contention --json``) for ``parts``
    (default all), seed 1."""
    opts = study.Options(parts=parts)
    return study.to_json(wan_contention.STUDY, opts, study.run_parts(wan_contention.STUDY, opts))


@pytest.fixture(scope="module")
def everything():
    """The whole study, once (every part)."""
    return document()


@pytest.fixture(scope="module")
def offered_load(everything):
    rows = [r for r in everything["rows"] if r["part"] == "offered-load"]
    return {"rows": rows, "offered_load": everything["offered_load"]}


#: The three pairs of the AAI network (docs/wan-contention.md) and the DS-3 their paths
#: share: GSD's access link, out of the carrier's Kansas City switch.
AAI_PAIRS = {("wpafb1", "ittc1"), ("nrl1", "ittc2"), ("arl1", "gsd1")}
SHARED_DS3 = "trunk kc->gsd"


def test_blocks_due_counts_what_the_periods_fit():
    # 2 s at 32.768 ms: blocks at 0, 32.768, ... 1998.8 ms.
    assert load.blocks_due(2.0, 32768) == 62
    assert load.blocks_due(4.0, 32768) == 123
    assert load.blocks_due(1.0, 250000) == 4


def test_the_three_pairs_share_one_ds3():
    from cellbench.experiment import testbed as tbmod

    tb = tbmod.preset("wan-contention-aai").to_dict()
    ds3 = [t for t in tb["trunks"] if t["phy"] == "ds3"]
    # NRL's access (004's FTP section) and GSD's, the one on every pair's path.
    assert sorted((t["from"], t["to"]) for t in ds3) == [("kc", "gsd"), ("nrl", "east")]
    on_every_path = set.intersection(*(set(common.ports_on_path(tb, a, b)) for a, b in AAI_PAIRS))
    assert SHARED_DS3 in on_every_path
    # 004: the carrier was congestion-free, every effect at the edge: the shared DS-3 is
    # an access link, not one of the carrier's own trunks, which are no narrower than
    # OC-3c.
    assert not load.inside_carrier(SHARED_DS3)
    carrier = [t for t in tb["trunks"] if load.inside_carrier(f"trunk {t['from']}->{t['to']}")]
    assert carrier and all(t["phy"] == "oc3c" for t in carrier)
    # The two edge switches 004 Fig. 8 measured keep their buffers.
    buffers = {site: s["buffer_cells"] for site, s in tb["sites"].items()}
    assert buffers.get("gsd") == 76458 and buffers.get("nrl") == 746


def test_inside_carrier_names_only_trunks_between_carrier_switches():
    assert load.inside_carrier("trunk east->kc") and load.inside_carrier("trunk kc->east")
    assert not load.inside_carrier("trunk kc->gsd")
    assert not load.inside_carrier("trunk nrl->east")
    assert not load.inside_carrier("ittc1")


def _curve(rows):
    return load.offered_load_points(rows)


def test_offered_load_is_paced_tcp_with_a_full_load_point(offered_load):
    rows = offered_load["rows"]
    assert {r["part"] for r in rows} == {"offered-load"}
    assert {r["protocol"] for r in rows} == {"tcp"}
    assert {(r["transmitter"], r["receiver"]) for r in rows} == AAI_PAIRS
    curve = _curve(rows)
    paced = [p for p in curve if p["load"] == "paced"]
    full = [p for p in curve if p["load"] == "full"]
    assert len(full) == 1 and curve[-1] is full[0]
    lossless = [p for p in paced if p["cells_lost"] == 0]
    lossy = [p for p in curve if p["cells_lost"] > 0]
    assert lossless and lossy
    # A lossless point carries what it offered and never more (each block owns its
    # period: the 62-blocks-in-2-s fencepost no longer counts one block too many).
    for p in lossless:
        assert p["carried_bps"] <= p["offered_bps"] * (1 + 1e-9)
        assert p["carried_bps"] >= 0.99 * p["offered_bps"]
    for r in rows:
        if r["load"] == "paced" and not r["cells_lost"]:
            assert r["bytes_received"] <= r["blocks_due"] * r["blocksize"]
    # Loss only where the three paths meet; TCP then retransmits, and the first lossy
    # load carries less than it offered.
    assert all(p["lost_at"] == [SHARED_DS3] for p in lossy)
    assert all(p["retransmitted_segments"] > 0 for p in lossy)
    first = next(p for p in paced if p["cells_lost"])
    assert first["carried_bps"] < first["offered_bps"]
    assert all(r["limited_by"] == "cell-loss" for r in rows if r["cells_lost"])
    f = offered_load["offered_load"]
    assert f["lossless_bps"] == pytest.approx(max(p["carried_bps"] for p in lossless))
    assert f["peak_bps"] == pytest.approx(max(p["carried_bps"] for p in curve))
    assert f["full_load_bps"] == pytest.approx(full[0]["carried_bps"])
    assert f["full_load_offered_bps"] is None


def _point(rep, period, carried, lost):
    return {
        "replication": rep, "period": period, "offered_bps": None if period is None else 6e6,
        "throughput_bps": carried, "cells_lost": lost, "retransmitted_segments": 0,
        "timeouts": 0, "lost_at": ["p"] if lost else [], "limited_by": "application",
    }  # fmt: skip


def test_offered_load_figures_average_the_replications():
    """Three replications: each figure is the mean at its point, with the range; a load
    counts as lossless only if every replication was (it took single runs: the best
    replication's lossless point and any one run's peak)."""
    rows = [
        _point(0, 1000.0, 5e6, 0), _point(1, 1000.0, 6e6, 0), _point(2, 1000.0, 7e6, 0),
        _point(0, 500.0, 9e6, 0), _point(1, 500.0, 11e6, 3), _point(2, 500.0, 10e6, 0),
        _point(0, None, 4e6, 9), _point(1, None, 8e6, 9), _point(2, None, 6e6, 9),
    ]  # fmt: skip
    f = load.offered_load_figures(rows)
    assert f["replications"] == 3
    assert f["lossless_bps"] == pytest.approx(6e6)  # 500 µs lost cells in one run
    assert f["lossless_range_bps"] == [5e6, 7e6]
    assert f["peak_bps"] == pytest.approx(10e6) and f["peak_range_bps"] == [9e6, 11e6]
    assert f["full_load_bps"] == pytest.approx(6e6) and f["full_load_range_bps"] == [4e6, 8e6]
    curve = load.offered_load_curve(rows)
    assert [p["lossy_replications"] for p in curve] == [0, 1, 3]
    # One replication: the figures of its one curve, unchanged.
    one = load.offered_load_figures([r for r in rows if r["replication"] == 1])
    assert (one["lossless_bps"], one["peak_bps"], one["full_load_bps"]) == (6e6, 11e6, 8e6)


def test_five_pairs_aggregates_average_the_replications():
    """The five pairs' sums, alone and together, per replication, then their mean (the
    report summed every replication's rows: --replications 2 printed 279 Mb/s alone)."""
    rows = [
        {"together": t, "replication": rep, "throughput_bps": bps}
        for t, rep, bps in [
            (False, 0, 10e6), (False, 0, 20e6), (False, 1, 12e6), (False, 1, 22e6),
            (True, 0, 5e6), (True, 0, 6e6), (True, 1, 7e6), (True, 1, 8e6),
        ]
    ]  # fmt: skip
    agg = five_pairs.five_pairs_aggregates(rows)
    assert agg["replications"] == 2
    assert agg["alone_bps"] == pytest.approx(32e6) and agg["alone_range_bps"] == [30e6, 34e6]
    assert agg["together_bps"] == pytest.approx(13e6)
    assert agg["together_range_bps"] == [11e6, 15e6]


def test_offered_load_udp_has_a_lossless_knee(everything):
    rows = [r for r in everything["rows"] if r["part"] == "offered-load-udp"]
    assert {r["protocol"] for r in rows} == {"udp"}
    for r in rows:
        # UDP is never blocked: every block due was sent.
        assert r["datagrams_sent"] == r["blocks_due"]
    curve = _curve(rows)
    lossless = [p for p in curve if p["cells_lost"] == 0]
    lossy = [p for p in curve if p["cells_lost"] > 0]
    assert lossless and lossy
    # The knee: every load below it is lossless and carried in full (never more),
    # every load above it loses cells; it sits below the shared DS-3's capacity for
    # 8 KB datagrams (96000 cells/s / 172 cells x 65536 bit = 36.58 Mb/s).
    knee = max(p["offered_bps"] for p in lossless)
    assert all(p["offered_bps"] > knee for p in lossy)
    assert all(p["offered_bps"] * (1 + 1e-9) >= p["carried_bps"] >= 0.99 * p["offered_bps"]
               for p in lossless)  # fmt: skip
    assert knee < 96000 / 172 * 65536
    assert all(p["lost_at"] == [SHARED_DS3] for p in lossy)
    # A lost cell loses its datagram: every lossy load carries less than it offers.
    assert all(p["carried_bps"] < p["offered_bps"] for p in lossy)
    f = everything["offered_load_udp"]
    assert f["lossless_bps"] == pytest.approx(max(p["carried_bps"] for p in lossless))


def test_deterministic_and_json_contract(everything, capsys):
    assert main(["reproduce", "wan-contention", "--json", "--workers", "1"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(everything))
    assert set(printed["offered_load"]) >= {"lossless_bps", "peak_bps", "full_load_bps"}
    parts = {r["part"] for r in printed["rows"]}
    assert parts == {
        "offered-load",
        "offered-load-udp",
        "five-pairs",
        "credits",
        "flow-control",
        "flow-control-five-pairs",
        "burst",
        "ftp",
    }
    extra = {
        "flow-control": {"scheme", "mix", "stream", "protocol"},
        "flow-control-five-pairs": {"scheme", "pair", "goodput_bps", "fairness_jain"},
        "five-pairs": {"together", "pair"},
        "credits": {"flow_control", "mix", "stream", "protocol"},
        "burst": {"direction", "burst_bytes"},
        "ftp": {"app", "window"},
    }
    for r in printed["rows"]:
        assert {"throughput_bps", "cells_lost", "limited_by"} <= set(r), r
        assert extra.get(r["part"], set()) <= set(r), r


def test_out_is_a_result_show_and_plot_read(tmp_path, capsys):
    out = tmp_path / "wc"
    assert main(["reproduce", "wan-contention", "--part", "offered-load", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "maximum lossless throughput" in text and "Mb/s" in text
    assert main(["show", str(out / "offered-load")]) == 0
    # The full-load run (every source full blast) is stored beside the paced sweep.
    assert main(["show", str(out / "full-load")]) == 0
    assert "full" in capsys.readouterr().out
    png = tmp_path / "ol.svg"
    assert main(["plot", str(out / "offered-load"), "--kind", "offered-load", "-o", str(png)]) == 0
    svg = png.read_text()
    assert "lossless point" in svg and "highest carried of these loads" in svg
    # The paced sweep holds no full-blast point: the figure does not name its marks
    # after the table's peak and full load, which count full blast (stored beside it).
    assert "full blast is not a point here" in svg and "full load" not in svg


@pytest.fixture(scope="module")
def credits(everything):
    return [r for r in everything["rows"] if r["part"] == "credits"]


def test_credits_prevent_cell_loss(credits):
    assert {r["mix"] for r in credits} == {"tcp-tcp", "udp-udp", "tcp-udp"}
    assert {r["stream"] for r in credits} == {"local", "remote"}
    with_credits = [r for r in credits if r["flow_control"] == "credit"]
    without = [r for r in credits if r["flow_control"] == "none"]
    assert len(with_credits) == len(without) == 8
    # Without flow control the shared port (and the hub's DS-3 port) overflow in every
    # case; with credits no cell is lost anywhere, and the two streams fill the port
    # to the receiver (OC-3c: 134.5 Mb/s of TCP payload in 9180-byte datagrams).
    cases = {(r["local"], r["remote"]) for r in credits}
    for case in cases:
        no = [r for r in without if (r["local"], r["remote"]) == case]
        yes = [r for r in with_credits if (r["local"], r["remote"]) == case]
        assert sum(r["cells_lost"] for r in no) > 0, case
        assert all(r["cells_lost"] == 0 and r["lost_at"] == [] for r in yes), case
        total = sum(r["throughput_bps"] for r in yes)
        assert total > 0.9 * 134.5e6 and total > sum(r["throughput_bps"] for r in no), case
        # Without credits, the remote stream (TCP: it backs off) starves in every case.
        remote = [r for r in no if r["stream"] == "remote"][0]
        assert remote["throughput_bps"] < 1e6 and remote["cells_lost"] > 0, case
    # The remote stream crosses the DS-3: it never gets more than its rate.
    assert all(r["throughput_bps"] < 36.9e6 for r in with_credits if r["stream"] == "remote")
    # Credits per VC per hop cover the longest hop's round trip: kclab -> hub, OC-3c,
    # 0.5 ms each way: (2.831 µs + 1 ms) / 2.831 µs -> 355 cells.
    assert {r["credits"] for r in with_credits} == {355}


def test_flow_control_side_by_side():
    # The credits part's streams under the five schemes (issue 29). UBR with tail drop
    # starves the remote TCP; credits and ERICA's explicit rate lose no cell and give
    # the remote stream its DS-3 share; EFCI marking loses fewer cells than tail drop
    # with UDP against UDP but shares worse than ERICA.
    rows = document("flow-control")["rows"]
    assert {r["scheme"] for r in rows} == set(flow_control.FLOW_SCHEMES)
    assert len(rows) == 5 * 8

    def pair(scheme, local, remote):
        got = {
            r["stream"]: r
            for r in rows
            if r["scheme"] == scheme and (r["local"], r["remote"]) == (local, remote)
        }
        return got["local"], got["remote"]

    def fairness(scheme, local, remote):
        return flow_control.jain_fairness(
            [r["throughput_bps"] for r in pair(scheme, local, remote)]
        )

    for local in ("tcp", "udp"):
        for remote in ("tcp", "udp"):
            for lossless in ("credit", "abr-er"):
                lo, re_ = pair(lossless, local, remote)
                assert lo["cells_lost"] == re_["cells_lost"] == 0, (lossless, local, remote)
                assert 25e6 < re_["throughput_bps"] < 36.9e6, (lossless, local, remote)
                assert fairness(lossless, local, remote) > 0.75
            assert fairness("ubr-tail", local, remote) < 0.65, (local, remote)
    tail = sum(r["cells_lost"] for r in pair("ubr-tail", "udp", "udp"))
    efci = sum(r["cells_lost"] for r in pair("abr-efci", "udp", "udp"))
    assert 0 < efci < tail / 4
    assert fairness("ubr-tail", "udp", "udp") < fairness("abr-efci", "udp", "udp")
    assert fairness("abr-efci", "udp", "udp") < fairness("abr-er", "udp", "udp")


def test_five_pairs_under_every_scheme(everything):
    # The five pairs together under each of the five schemes (issue 29 §3).
    rows = [r for r in everything["rows"] if r["part"] == "flow-control-five-pairs"]
    alone = {r["pair"] for r in everything["rows"] if r["part"] == "five-pairs"}
    assert len(rows) == 5 * 5
    for scheme in flow_control.FLOW_SCHEMES:
        mine = [r for r in rows if r["scheme"] == scheme]
        assert {r["pair"] for r in mine} == alone, scheme
        assert all(r["goodput_bps"] > 0 for r in mine), scheme
        # Jain's index of five: 1/5 when one takes everything, 1 when all are equal.
        (fairness,) = {r["fairness_jain"] for r in mine}
        assert 0.2 <= fairness <= 1.0, scheme
        assert fairness == pytest.approx(
            flow_control.jain_fairness([r["goodput_bps"] for r in mine])
        )
        if scheme.startswith("abr"):
            # The DS-3 pacing became each ABR circuit's PCR: TM 4.0's default PCR, the
            # adapter's OC-3c cell rate (149.76 Mb/s), would let ACR climb far above it.
            assert all(0 < r["acr_min_bps"] <= r["acr_bps"] <= 40.704e6 for r in mine), scheme
        else:
            assert all(r["acr_bps"] is None for r in mine), scheme
    by = {(r["scheme"], r["pair"]): r for r in rows}
    by_scheme = {r["scheme"]: r["fairness_jain"] for r in rows}
    # Credits: a cell leaves a hop only holding a credit for the next, so no port drops
    # one, even where the pairs' queues reach far past the 256-cell buffer of UBR.
    credit = [r for r in rows if r["scheme"] == "credit"]
    assert all(r["cells_lost"] == 0 and r["lost_at"] == [] for r in credit)
    assert max(r["peak_queue_cells"] for r in credit) > 256
    # Tail drop: the pairs into lawrence overflow the hub's DS-3 port onto it; its queue
    # never holds more than the buffer.
    for pair in ("kclab1->law1", "dc1->law3"):
        assert "trunk kc->lawrence" in by[("ubr-tail", pair)]["lost_at"]
    assert all(r["peak_queue_cells"] <= 256 for r in rows if r["scheme"] != "credit")
    # What the literature expected and the model bears out at every seed tried (1-3):
    # credits carry the most; ERICA's explicit rate loses far fewer cells than tail
    # drop and shares better than EFCI's binary feedback.
    total = {s: sum(r["goodput_bps"] for r in rows if r["scheme"] == s) for s in by_scheme}
    lost = {s: sum(r["cells_lost"] for r in rows if r["scheme"] == s) for s in by_scheme}
    assert max(total, key=total.get) == "credit"
    assert lost["abr-er"] < lost["ubr-tail"] / 2
    assert by_scheme["abr-er"] > by_scheme["abr-efci"]
    # The pairs keep their round trips and windows under every scheme.
    assert {(r["pair"], r["rtt_ms"], r["window"]) for r in rows} == {
        (r["pair"], r["rtt_ms"], r["window"])
        for r in everything["rows"]
        if r["part"] == "five-pairs"
    }


def test_abr_source_makes_pacing_the_pcr():
    assert flow_control_five_pairs.abr_source("pair1", 40.704) == {
        "pair1.protocol.pacing": "off",
        "pair1.service": "abr (pcr = 40.704M, icr = 10M)",
    }
    # An unpaced pair's circuit takes TM 4.0's default PCR (the adapter's rate).
    assert flow_control_five_pairs.abr_source("pair2", None)["pair2.service"] == "abr (icr = 10M)"


def test_credits_on_a_switch_without_flow_control_are_refused(tmp_path, capsys):
    bad = tmp_path / "bad.netspec"
    bad.write_text(
        "testbed wan-contention {\n"
        "    switch lawrence { buffer_cells = 512;\n"
        "                      credits = 64; }\n"
        "}\n"
        "cluster { test a { type = full (duration=1); own = law1:1; peer = law2:1; }\n"
        "          test b { type = sink; own = law2:1; peer = law1:1; } }\n"
    )
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"cellbench: error: {bad}:3:23: the simulator refuses it: switch lawrence credits 64: "
        "credits need flow_control = credit"
    )
    bad.write_text(bad.read_text().replace("credits = 64;", "flow_control = credit;"))
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        f"cellbench: error: {bad}:3:23: the simulator refuses it: switch lawrence flow_control "
        "credit with credits unset: expected credits >= 1"
    )
    bad.write_text(bad.read_text().replace("switch lawrence", "switch nowhere"))
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"cellbench: error: {bad}:2:12: found switch nowhere, expected a site")


def test_burst_knees_bracket_the_edge_buffers(everything):
    rows = [r for r in everything["rows"] if r["part"] == "burst"]
    assert {r["direction"] for r in rows} == {"oc3-to-ds3", "ds3-to-oc3"}
    assert sorted({r["burst_bytes"] for r in rows}) == [1024 << i for i in range(14)]
    estimates = {b["direction"]: b for b in everything["buffers"]}
    # Each direction's bursts queue where OC-3c meets the DS-3, in the sending site's
    # edge switch: 3.5 MB at the OC-3c site, 35 KB at the DS-3 site. The knee of the
    # throughput curve brackets each (the burst calculator read backwards).
    for direction, configured in (("oc3-to-ds3", 3.5 * 2**20), ("ds3-to-oc3", 35 * 2**10)):
        b = estimates[direction]
        lo, hi = b["buffer_estimate_bytes"]
        assert lo <= b["buffer_bytes"] <= hi and abs(b["buffer_bytes"] - configured) < 48
        mine = [r for r in rows if r["direction"] == direction]
        below = [r for r in mine if 2048 <= r["burst_bytes"] <= b["knee_bytes"]]
        above = [r for r in mine if r["burst_bytes"] > b["knee_bytes"]]
        assert all(r["cells_lost"] == 0 and r["throughput_bps"] > 34.9e6 for r in below)
        assert all(r["cells_lost"] > 0 and r["limited_by"] == "cell-loss" for r in above)
    # The big buffer's knee is some hundred times the small one's.
    assert estimates["oc3-to-ds3"]["knee_bytes"] >= 64 * estimates["ds3-to-oc3"]["knee_bytes"]


def test_five_pairs_alone_then_together(everything):
    rows = [r for r in everything["rows"] if r["part"] == "five-pairs"]
    alone = {r["pair"]: r for r in rows if not r["together"]}
    together = {r["pair"]: r for r in rows if r["together"]}
    assert len(alone) == len(together) == 5
    assert min(r["rtt_ms"] for r in rows) == 2.0 and max(r["rtt_ms"] for r in rows) == 70.0
    # Alone, each pair's cells are paced at its path's narrowest link: nothing is lost.
    assert all(r["cells_lost"] == 0 and r["lost_at"] == [] for r in alone.values())
    # Together, the pairs into lawrence share the hub's DS-3 port onto it, and lose
    # cells there; the coast-to-coast pair shares nothing that overflows.
    for pair in ("kclab1->law1", "dc1->law3"):
        assert "trunk kc->lawrence" in together[pair]["lost_at"]
        assert together[pair]["throughput_bps"] < alone[pair]["throughput_bps"]
    assert "trunk minneapolis->kc" in together["mpls2->dc3"]["lost_at"]
    assert together["sd1->dc2"]["cells_lost"] == 0
    lost = [r for r in together.values() if r["cells_lost"]]
    assert lost and all(r["limited_by"] == "cell-loss" for r in lost)


def test_windows_are_the_bandwidth_delay_products():
    """The experiment files' windows, derived: the DS-3 TCP payload rate (calc layers)
    times the pair's round trip, rounded up to a KB."""
    from cellbench import calc
    from cellbench.experiment import testbed

    tb = testbed.preset("wan-contention").to_dict()
    rate = {x["layer"]: x["mbps"] for x in calc.layers("ds3", "llc-snap", 9180)}["tcp_payload"]
    pairs = {"w1": ("kclab1", "law1"), "w2": ("mpls1", "law2"), "w3": ("dc1", "law3"),
             "w4": ("sd1", "dc2"), "w5": ("mpls2", "dc3")}  # fmt: skip
    from cellbench.reproduce.envelope import file_assumptions

    # Each window is an assumption whose default is the BDP; its range starts at the BDP,
    # or at 64 KB (no window scaling, 004 Window management) where the BDP is larger.
    defaults = {a.key: a for a in file_assumptions("wan-contention-five-pairs")}
    for key, (a, b) in pairs.items():
        w = five_pairs.bdp_window(rate * 1e6, five_pairs.pair_rtt_s(tb, a, b))
        assert defaults[key].default.text == f"{w // 1024}K"
        assert defaults[key].low.text == f"{min(w, 65536) // 1024}K"
    # The NRL -> JPL FTP's extended window: its own testbed's round trip.
    from cellbench.experiment.plan import make_plan

    ftp = study.HERE / "wan-contention-ftp.netspec"
    plan = make_plan(str(ftp), sets=[], replications=None, seed=None, testbed=None,
                            trace=False, series=False)  # fmt: skip
    trunks = plan.task(0).spec["trunks"]
    rtt = 2 * sum(t["delay_ms"] for t in trunks) / 1e3
    w = five_pairs.bdp_window(rate * 1e6, rtt)
    extended = {a.key: a for a in file_assumptions("wan-contention-ftp")}["extended_window"]
    assert extended.default.text == f"{w // 1024}K"


def test_ftp_nrl_to_jpl_default_window_extended_window_and_ttcp(everything):
    rows = {r["app"]: r for r in everything["rows"] if r["part"] == "ftp"}
    assert set(rows) == {"ftp-default", "ftp-extended", "ttcp"}
    assert {(r["transmitter"], r["receiver"]) for r in rows.values()} == {("nrl", "jpl")}
    # 3,700 km at 5 µs/km each way, plus the two 20 km metro DS-3s.
    assert rows["ttcp"]["rtt_ms"] == pytest.approx(37.4)
    # The default 4 KB window: one 4 KB segment per round trip, the round trip plus its
    # 4 KB's time on the DS-3 (under 1 ms).
    small = rows["ftp-default"]
    assert small["window"] == 4096 and small["limited_by"] == "window"
    assert 4096 * 8 / 0.0394 < small["throughput_bps"] <= 4096 * 8 / 0.0374
    # The extended window holds 20 whole 8 KB segments (171008 // 8192), and a full
    # segment's round trip is the propagation plus some 4 ms of segment times: both
    # extended rows carry that, not the DS-3's 36.4 nor the assumed disk's 33.6.
    assert rows["ttcp"]["window"] == 171008
    bound = 20 * 8192 * 8 / 0.0374
    for app in ("ftp-extended", "ttcp"):
        assert 0.85 * bound < rows[app]["throughput_bps"] < 0.92 * bound, app
    assert rows["ftp-extended"]["throughput_bps"] == pytest.approx(
        rows["ttcp"]["throughput_bps"], rel=0.01
    )
    assert all(r["cells_lost"] == 0 for r in rows.values())


def _ftp_at(*sets: str) -> dict[str, dict]:
    """The ftp part's rows with the experiment file's assumptions moved (as --envelope
    moves them)."""
    opts = study.Options(parts=("ftp",), file_sets={"wan-contention-ftp": sets})
    doc = study.to_json(wan_contention.STUDY, opts, study.run_parts(wan_contention.STUDY, opts))
    return {r["app"]: r for r in doc["rows"] if r["part"] == "ftp"}


def test_ftp_extended_window_is_the_bound_not_the_ds3_or_the_disk():
    """A window a few segments larger lets ttcp reach the paced DS-3 (36.37 Mb/s of TCP
    in 8 KB segments), and a slower disk holds the extended FTP to the disk's rate: at
    the default neither binds (the causes in reproduce/wan_contention/ftp.py)."""
    rows = _ftp_at("extended_window=200K", "disk=2M")
    assert rows["ttcp"]["throughput_bps"] > 35e6
    # Now the DS-3, not the window, is the fuller bound (at the default: `window`).
    assert rows["ttcp"]["limited_by"] == "link", rows["ttcp"]["limit_evidence"]
    assert rows["ftp-extended"]["throughput_bps"] == pytest.approx(2 * 2**20 * 8, rel=0.01)
    # At the default window the disk does not hold the extended FTP, and its row says so:
    # 94% of the disk's offer arrived, but the window lets through less than the disk
    # offers, so `window`; a disk of 10 MB/s leaves it where it was, and a 200 KB window
    # lets it reach the disk, then `application`.
    default = _ftp_at()["ftp-extended"]
    assert default["limited_by"] == "window", default["limit_evidence"]
    fast = _ftp_at("disk=10M")["ftp-extended"]
    assert fast["throughput_bps"] == pytest.approx(default["throughput_bps"], rel=0.005)
    assert fast["limited_by"] == "window", fast["limit_evidence"]
    wide = _ftp_at("extended_window=200K")["ftp-extended"]
    assert wide["throughput_bps"] == pytest.approx(4 * 2**20 * 8, rel=0.01)
    assert wide["throughput_bps"] > 1.05 * default["throughput_bps"]
    assert wide["limited_by"] == "application", wide["limit_evidence"]


def test_ftp_with_sunos_window_sends_two_segments_per_round_trip():
    """SunOS 4.1.3's ftp and in.ftpd set 24 KB (three 8 KB segments): the receiver ACKs
    every second segment, the third waits, so two go per round trip (plus what the
    delayed-ACK timer releases), under 24 KB per round trip; at the backbone range's
    other end the same falls below 004's 2.88 Mb/s."""
    near = _ftp_at("default_window=24K")["ftp-default"]
    rtt = 0.0374
    assert 2 * 8192 * 8 / (rtt + 0.002) < near["throughput_bps"] < 0.8 * 24576 * 8 / rtt
    far = _ftp_at("default_window=24K", "backbone_ms=29")["ftp-default"]
    assert far["throughput_bps"] < 2.88e6 < near["throughput_bps"]


def _traffic(tx: str) -> dict:
    from cellbench.experiment.plan import make_plan

    text = (
        "testbed wan-contention { }\ncluster {\n"
        f"  test a {{ type = {tx}; protocol = udp; own = law1:1; peer = law2:1; }}\n"
        "  test b { type = sink; protocol = udp; own = law2:1; peer = law1:1; }\n}\n"
    )
    plan = make_plan(text, sets=[], replications=None, seed=None, testbed=None,
                            trace=False, series=False)  # fmt: skip
    return plan.task(0).spec["connections"][0]["traffic"]


def test_bursts_and_ftp_in_the_language(tmp_path, capsys):
    # A 32 KB burst at 35 Mb/s: four 8 KB datagrams back to back every 32768*8/35e6 s.
    t = _traffic("burstq (blocksize=8K, size=32K, rate=35000000, duration=1)")
    assert t == {"type": "burstq", "blocksize": 8192, "blocks": 4,
                 "period_us": pytest.approx(32768 * 8 / 35e6 * 1e6), "duration_s": 1.0}  # fmt: skip
    # FTP: one block per disk read, at the disk's rate (bytes/s).
    t = _traffic("ftp (blocksize=8K, disk_rate=1M, duration=2)")
    assert t["type"] == "burstq" and t["period_us"] == pytest.approx(8192 / 2**20 * 1e6)
    bad = tmp_path / "bad.netspec"
    for tx, message in (
        ("burst (blocksize=8K, size=32K, blocks=2, period=10, duration=1)", "size= or blocks="),
        ("burst (blocksize=8K, rate=1M, period=10, duration=1)", "rate= or period="),
        ("ftp (blocksize=8K, duration=1)", "ftp() with disk_rate="),
    ):
        bad.write_text(
            "testbed wan-contention { }\ncluster {\n"
            f"  test a {{ type = {tx}; protocol = udp; own = law1:1; peer = law2:1; }}\n"
            "  test b { type = sink; protocol = udp; own = law2:1; peer = law1:1; }\n}\n"
        )
        assert main(["run", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"cellbench: error: {bad}:3:") and message in err, err


def test_ftp_misses_name_their_mechanism_and_what_004_leaves_out():
    """Each NRL -> JPL line carries the part's own cause, not the scoreboard's 'no known
    cause'; the ftp lines say what 004 does not give."""
    from cellbench.reproduce import fidelity

    causes = fidelity.causes()
    ids = ("004-s3-64k-9mbps", "004-s3-ttcp", "004-s3-ftp", "004-s3-ftp-extended")
    assert all(causes.get(rid, fidelity.UNEXPLAINED) != fidelity.UNEXPLAINED for rid in ids)
    assert "window-bound" in causes["004-s3-ttcp"] and "round trip" in causes["004-s3-ttcp"]
    assert "names neither host's OS" in causes["004-s3-ftp"]
    assert "names no disk" in causes["004-s3-ftp-extended"]
    # The cause says what binds it, as the row's verdict does.
    extended = causes["004-s3-ftp-extended"]
    assert extended.startswith("window-bound as ttcp is") and "reads `window`" in extended


# --- the open values 004 leaves for Table 3, Fig. 7 and NRL -> JPL, as --envelope moves them


def _axis(part: str, key: str):
    """The envelope's axis for one assumption of a part (its files and its values)."""
    from cellbench.reproduce import envelope, fidelity

    [c] = [c for s, p, _, c in fidelity.declarations() if (s, p) == ("wan-contention", part)]
    return {a.key: a for a in envelope.axes("wan-contention", part, c)}[key]


def _at_corner(part: str, key: str, value: str) -> tuple[dict, pd.DataFrame, list[dict]]:
    """The part with one assumption at one of the envelope's values for it, set in the
    files that declare it as the envelope sets a corner: the study's JSON document, and
    the runs' stored rows and metas."""
    import pandas as pd

    from cellbench import scratch

    axis = _axis(part, key)
    assert value in axis.values and value != axis.default
    opts = study.Options(parts=(part,), file_sets={f: (f"{key}={value}",) for f in axis.files})
    runs = wan_contention.STUDY.part(part)
    with scratch.directory("cellbench-test-") as tmp:
        ran = study.execute(runs.runs(opts), opts, tmp)
        frames = pd.concat([r.result.to_pandas() for r in ran])
        metas = [r.result.meta for r in ran]
        doc = study.to_json(wan_contention.STUDY, opts, {part: runs.collect(opts, ran)})
    return doc, frames, metas


def test_credits_window_is_an_assumption_the_envelope_moves():
    """004 gives no window for Table 3: 64 KB (no window scaling) to OSF/1's 1 MB sb_max;
    at 1 MB every TCP stream runs with that window."""
    assert _axis("credits", "window").values == ["64K", "1M"]
    doc, df, _ = _at_corner("credits", "window", "1M")
    tcp = df[df["protocol"] == "tcp"]
    assert len(tcp) == 8 and set(tcp["sndbuf"]) == {1 << 20}
    # The part's rows carry the window each TCP stream ran with (UDP has none).
    windows = {(r["protocol"], r["window"]) for r in doc["rows"]}
    assert windows == {("tcp", 1 << 20), ("udp", None)}


def test_credits_report_names_the_window_the_run_used(capsys):
    """The report's header says the TCP window the streams ran with, not the file's
    default: `--set window=1M` reads 1 MB."""
    assert main(["reproduce", "wan-contention", "--part", "credits", "--set", "window=1M"]) == 0
    [header] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("(c)")]
    assert "; TCP 1 MB window, UDP 8 KB datagrams;" in header, header
    assert "64 KB" not in header


def test_credits_test_length_is_an_assumption_the_envelope_moves():
    """004 gives no test length for Table 3: from ttcp's 16 MB (about 1 s at OC-3c) to
    NetSpec's 10 s; at the 1 s end the UDP sources send for 1 s, not the default's 2."""
    assert _axis("credits", "seconds").values == ["1", "10"]
    doc, df, _ = _at_corner("credits", "seconds", "1")
    udp = df[df["protocol"] == "udp"]
    assert len(udp) == 8
    assert udp["sender_seconds"].between(0.99, 1.01).all()
    assert {r["flow_control"] for r in doc["rows"]} == {"none", "credit"}


def test_burst_path_length_is_an_assumption_that_leaves_the_knees():
    """004 gives ITTC and NRL (Fig. 7), not their distance: the 1,570 km great circle
    (7.85 ms) to the offered-load testbed's 1,800 km route between them (9.0 ms). The
    delay moves the path, not the buffers read back from the knees."""
    from cellbench.experiment import testbed

    aai = testbed.preset("wan-contention-aai").to_dict()
    hops = (("ittc", "gsd"), ("gsd", "kc"), ("kc", "east"), ("east", "nrl"))
    route = [frozenset(x) for x in hops]
    trunks = {frozenset((t["from"], t["to"])): t["delay_ms"] for t in aai["trunks"]}
    assert sum(trunks[x] for x in route) == pytest.approx(9.0)
    assert _axis("burst", "trunk_ms").values == ["7.85", "9"]
    doc, _, [meta] = _at_corner("burst", "trunk_ms", "9")
    assert [t["delay_ms"] for t in meta["testbed"]["trunks"]] == [9]
    knees = {b["direction"]: b["knee_bytes"] for b in doc["buffers"]}
    assert knees == {b["direction"]: b["knee_bytes"] for b in document("burst")["buffers"]}


def test_ftp_round_trip_spans_both_coast_to_coast_paths():
    """The study's two coast-to-coast paths disagree: NRL -> JPL's great circle (37.4 ms)
    and five-pairs' San Diego -> Washington through the hub (70 ms). The backbone delay's
    range spans both, 004's own example (a 64 KB window at about 9 Mb/s: near 58 ms)
    between: at the far end the 64 KB figure falls below 9 Mb/s."""
    from cellbench.experiment import testbed

    tb = testbed.preset("wan-contention").to_dict()
    coast = five_pairs.pair_rtt_s(tb, "sd1", "dc2") * 1e3
    doc, _, _ = _at_corner("ftp", "backbone_ms", "34.8")
    rows = {r["app"]: r for r in doc["rows"] if r["part"] == "ftp"}
    # (the pair's 70 ms and its hosts' 20 m machine-room links)
    assert rows["ttcp"]["rtt_ms"] == pytest.approx(coast, abs=0.01) == 70.0
    assert 65536 * 8 / (coast / 1e3) < 9e6 < 65536 * 8 / 0.0374


def test_windows_top_out_at_osf1s_socket_buffer_limit():
    """Every wan-contention window's range ends at 1 MB, OSF/1's stock sb_max (its
    sys_attrs_socket(5) page), which is what the model's OSF/1 accepts."""
    from cellbench.experiment.testbed.schema import FLAVOUR_MAX_SOCKBUF
    from cellbench.reproduce.envelope import file_assumptions

    windows = [
        a
        for f in ("five-pairs", "ftp", "credits", "offered-load", "full-load")
        for a in file_assumptions(f"wan-contention-{f}")
        if a.key in ("w1", "w2", "w3", "w4", "w5", "extended_window", "window")
    ]
    assert len(windows) == 9
    for a in windows:
        assert a.high.value == FLAVOUR_MAX_SOCKBUF["osf1"] == 1 << 20, a.key
        assert "sb_max = SB_MAX = 1048576 bytes, its sys_attrs_socket(5) page" in a.source
