"""What bound a real connection, read from the kernel's and the hosts' evidence
(cellbench.engines.real.measure.explain), on reports shaped as the agents write them."""

from __future__ import annotations

import pytest

from cellbench.engines.real.measure import columns, explain, series_rows, throughput_bps


def _sent(**info) -> dict:
    host = info.pop("host", {"agent_cpu": 0.1, "cpu_busy": 0.3, "interface": "eth0"})
    return {
        "throughput_bps": 90e6,
        "bytes": 10_000_000,
        "blocks": 100,
        "send_errors": 0,
        "seconds": 1.0,
        "tcp_info": {"busy_us": 1_000_000, "total_retrans": 0, "rtt_us": 500} | info,
        "host": host,
    }


GOT = {
    "bytes": 10_000_000,
    "datagrams": None,
    "throughput_bps": 90e6,
    "host": {"agent_cpu": 0.1, "interface": "eth0"},
}


@pytest.mark.parametrize(
    ("info", "limited_by", "words"),
    [
        ({"rwnd_limited_us": 700_000}, "window", "receiver's window held the sender back 70%"),
        ({"sndbuf_limited_us": 600_000}, "window", "send buffer held the sender back 60%"),
        ({"total_retrans": 12}, "link", "12 retransmitted segment(s)"),
        # Losses at the sender's own interface queue: a host and window limit, as in
        # the simulator; a few drops against many resends leave the path's losses.
        (
            {"total_retrans": 12, "host": {"interface": "vab", "if_tx_drops": 6}},
            "interface-queue",
            "interface vab dropped 6 outgoing packet(s)",
        ),
        (
            {"total_retrans": 12, "host": {"interface": "vab", "if_tx_drops": 5}},
            "link",
            "12 retransmitted segment(s)",
        ),
        ({"host": {"agent_cpu": 0.97, "cpu_busy": 0.6}}, "host-cpu", "0.97 of a core"),
        # A saturated CPU before the window it closes and the losses beside it, as the
        # simulator orders them: busy all along, it set the pace.
        (
            {"total_retrans": 3, "rwnd_limited_us": 700_000, "host": {"agent_cpu": 0.97}},
            "host-cpu",
            "TCP_INFO: 3 retransmission(s), rwnd-limited 70% of the kernel's busy time",
        ),
        # Not where the sender's interface dropped: its queue full, the path backlogged.
        (
            {
                "total_retrans": 12,
                "host": {"agent_cpu": 0.97, "interface": "vab", "if_tx_drops": 6},
            },
            "interface-queue",
            "interface vab dropped 6 outgoing packet(s)",
        ),
        ({"busy_us": 200_000}, "application", "had data to send 20% of the writes' span"),
        ({"busy_us": 0}, "undetermined", "clock tick"),
        ({"busy_us": None}, "undetermined", "before Linux 4.10"),
        ({}, "link", "congestion window over the path"),
    ],
)
def test_tcp_limits(info, limited_by, words):
    got, evidence = explain("tcp", _sent(**info), GOT, None)
    assert got == limited_by and words in evidence, evidence


def test_window_comes_before_retransmissions_and_a_met_rate_before_all():
    sent = _sent(rwnd_limited_us=800_000, total_retrans=5)
    assert explain("tcp", sent, GOT, None)[0] == "window"
    assert explain("tcp", sent, GOT, 90e6)[0] == "application"
    assert explain("tcp", sent, GOT, 100e6)[0] == "window"  # 10% short of the offered rate
    # Met by what arrived, not by what was written: a sender whose writes kept the
    # offered rate while its receiver got 10% less was not bound by its application.
    assert explain("tcp", sent, GOT | {"throughput_bps": 81e6}, 90e6)[0] == "window"


def test_udp_loss_at_the_socket_buffer_or_on_the_path():
    sent = _sent() | {"tcp_info": None, "bytes": 1_400_000, "blocks": 1000}
    got = {"bytes": 700_000, "datagrams": 500, "throughput_bps": 5.6e6, "host": {"agent_cpu": 0.4}}
    limited, evidence = explain("udp", sent, got | {"host": {"udp_rcvbuf_errors": 500}}, None)
    assert limited == "host-cpu" and "RcvbufErrors" in evidence
    tx = {"interface": "vab", "if_tx_drops": 3}
    limited, evidence = explain("udp", sent | {"host": tx}, got, None)
    assert limited == "link" and "50.0% of the bytes" in evidence and "3 dropped at vab" in evidence
    whole = got | {"bytes": 1_400_000, "datagrams": 1000}
    assert explain("udp", sent, whole, None)[0] == "undetermined"


def test_a_udp_row_is_what_arrived_and_says_where_the_rest_was_lost():
    """Issue 31: a UDP row's throughput is the sink's rate, not the sender's writes; what
    was offered and where datagrams were lost stand in its evidence."""
    sent = _sent() | {"tcp_info": None, "bytes": 1_400_000, "blocks": 1000, "send_errors": 100}
    sent["host"] = {"interface": "vab", "if_tx_drops": 50}
    got = {"bytes": 700_000, "datagrams": 500, "throughput_bps": 5.6e6, "host": {}}
    assert throughput_bps("udp", sent, got) == 5.6e6
    assert throughput_bps("tcp", sent, got) == 90e6
    limited, evidence = explain("udp", sent, got, None)
    assert "measured" not in evidence or "90.00" not in evidence, evidence
    assert evidence.endswith(
        "; offered 90.00 Mb/s: 500 of 1000 datagrams arrived (50% lost: 100 refused by the "
        "sender's kernel (ENOBUFS), 50 dropped at vab (sender, out))"
    ), evidence
    # A paced source is the application's only if what arrived met its rate.
    assert explain("udp", sent, got, 90e6)[0] != "application"
    full = got | {"throughput_bps": 89.9e6, "datagrams": 1000, "bytes": 1_400_000}
    limited, evidence = explain("udp", sent | {"send_errors": 0}, full, 90e6)
    assert limited == "application" and "received 89.90 Mb/s" in evidence, evidence


def test_columns_and_series_rows():
    sent = _sent(rwnd_limited_us=250_000, snd_mss=1448) | {
        "congestion": "cubic",
        "notes": ["TCP_MAXSEG 9000: ...", "x"],
        "series": [[100.5, 14480, 2**31 * 1448, 2896, 410]],
    }
    c = columns("tcp", sent, GOT)
    assert c["mss"] == 1448 and c["rwnd_limited_s"] == 0.25 and c["tcp_busy_s"] == 1.0
    assert c["tx_interface"] == c["rx_interface"] == "eth0" and c["notes"].endswith("; x")
    assert c["rx_udp_rcvbuf_errors"] is None
    (row,) = series_rows({"run": 3}, 1, sent, 100.0)
    assert row == {
        "run": 3,
        "connection": 1,
        "t_s": 0.5,
        "cwnd": 14480,
        "ssthresh": 2**31 * 1448,
        "flight": 2896,
        "srtt_us": 410.0,
    }


def test_a_full_blast_held_at_the_daemons_max_rate_says_so():
    """A veth pair carries 25 Gb/s; the daemon's default --max-rate of 10000 Mb/s held
    ttcp's full blast to 9.58 Gb/s: the limit, its evidence and the row's notes name it."""
    cap = 10e9
    waited = _sent() | {"throughput_bps": 9.58e9, "cap_waits": 3120, "cap_bps": cap}
    limited, evidence = explain("tcp", waited, GOT, None)
    assert limited == "max-rate"
    assert evidence == (
        "3120 write(s) waited for the transmitter's daemon's --max-rate of 10000 Mb/s: the "
        "cap, not the path, set the pace; measured 9580.00 Mb/s"
    )
    note = columns("tcp", waited, GOT)["notes"]
    assert "held this full blast at its --max-rate of 10000 Mb/s" in note
    assert "cellbench daemon --max-rate MBPS raises it" in note
    # Within 5% of the cap without a write waiting (the writes' own time kept it under).
    near = waited | {"cap_waits": 0}
    limited, evidence = explain("tcp", near, GOT, None)
    assert limited == "max-rate" and evidence.startswith("ran within 5% of the transmitter's")
    # Further below it, or paced (its rate was checked against the cap before it ran),
    # the cap had no part in it.
    assert explain("tcp", near | {"throughput_bps": 9.0e9}, GOT, None)[0] != "max-rate"
    paced = near | {"timing": {"late_blocks": 0}}
    assert explain("tcp", paced, GOT | {"throughput_bps": 9.58e9}, 9.58e9)[0] == "application"
    assert columns("tcp", paced, GOT)["notes"] is None
    assert columns("tcp", near | {"throughput_bps": 9.0e9}, GOT)["notes"] is None


def test_paced_streams_the_shared_cap_held_say_max_rate():
    """Issue 31: two paced 80 Mb/s streams under one daemon's 100 Mb/s cap, each admitted
    alone, ran at 56 and 51.5 Mb/s: their writes waited for the cap, which held them."""
    held = _sent(busy_us=200_000) | {
        "throughput_bps": 56e6, "seconds": 10.0, "timing": {"late_blocks": 900},
        "cap_waits": 2000, "cap_wait_s": 2.5, "cap_bps": 100e6,
    }  # fmt: skip
    limited, evidence = explain("tcp", held, GOT, 80e6)
    assert limited == "max-rate", evidence
    assert evidence.startswith("paced at 80.00 Mb/s offered, 2000 write(s) waited for")
    assert "--max-rate of 100 Mb/s (2.50 s in all" in evidence
    # Waits that stand for little of the time it fell behind: not the cap.
    assert explain("tcp", held | {"cap_wait_s": 0.1}, GOT, 80e6)[0] != "max-rate"
    # A paced stream that met its rate is the application's, whatever waited.
    assert explain("tcp", held | {"throughput_bps": 80e6}, GOT, 80e6)[0] == "application"
