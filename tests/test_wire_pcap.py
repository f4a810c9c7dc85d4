"""Pcap files of cells and AAL5 PDUs: written, read back, checked byte by byte."""

from __future__ import annotations

import struct
import subprocess
import sys

import pytest

from cellbench import wire

PACKET = bytes(range(60))


def test_cells_file_layout(tmp_path):
    path = tmp_path / "cells.pcap"
    n = wire.write_pcap(path, PACKET, vpi=2, vci=99, start_us=1_000_000.5)
    cells = wire.encode(PACKET, 2, 99)
    assert n == len(cells) == 2
    data = path.read_bytes()
    magic, major, minor, _zone, _sigfigs, _snaplen, linktype = struct.unpack("<IHHiIII", data[:24])
    assert (magic, major, minor, linktype) == (0xA1B23C4D, 2, 4, 197)  # nanosecond pcap, ERF
    pos = 24
    for k, cell in enumerate(cells):
        secs, nsecs, caplen, origlen = struct.unpack("<IIII", data[pos : pos + 16])
        # Back to back at the OC-3c cell rate: 424 bits at 149.76 Mb/s = 2831.196 ns.
        t_ps = 1_000_000_500_000 + k * 424 * 10**12 // 149_760_000
        assert (secs, nsecs) == (t_ps // 10**12, t_ps % 10**12 // 1000)
        assert caplen == origlen == 16 + 52
        erf = data[pos + 16 : pos + 16 + caplen]
        assert erf[8] == 3  # ERF type: ATM cell
        assert struct.unpack(">HHH", erf[10:16]) == (68, 0, 52)  # rlen, lctr, wlen
        assert erf[16:20] == cell[:4] and erf[20:] == cell[5:]  # cell without its HEC
        pos += 16 + caplen
    assert pos == len(data)


def test_pdu_file_layout(tmp_path):
    path = tmp_path / "pdu.pcap"
    assert wire.write_pcap(path, PACKET, vpi=2, vci=0x1234, pdus=True) == 1
    data = path.read_bytes()
    assert struct.unpack("<I", data[20:24]) == (123,)  # SunATM
    record = data[24 + 16 :]
    # SunATM pseudo-header: type 2 (LLC multiplexed), VPI, VCI; then the AAL5 payload.
    assert record == bytes([0x02, 2, 0x12, 0x34]) + bytes.fromhex("aaaa030000000800") + PACKET
    wire.write_pcap(path, PACKET, vpi=2, vci=5, encap="vc-mux", pdus=True)
    assert path.read_bytes()[40:] == bytes([0x00, 2, 0, 5]) + PACKET


@pytest.mark.parametrize("encap", wire.ENCAPS)
def test_pcap_roundtrip(tmp_path, encap):
    path = tmp_path / "x.pcap"
    wire.write_pcap(path, PACKET * 5, vpi=200, vci=65535, encap=encap, clp=1)
    records = wire.read_pcap(path)
    assert [r["kind"] for r in records] == ["cell"] * len(records)
    cells = [r["cell"] for r in records]
    assert cells == wire.encode(PACKET * 5, 200, 65535, encap, clp=1)  # HEC recomputed
    assert wire.decode(cells, encap) == [PACKET * 5]
    times = [r["time_ps"] for r in records]
    assert times == sorted(times) and len(set(times)) == len(times)

    wire.write_pcap(path, PACKET, vpi=200, vci=65535, encap=encap, pdus=True)
    (pdu,) = wire.read_pcap(path)
    assert (pdu["kind"], pdu["vpi"], pdu["vci"], pdu["llc"]) == (
        "pdu",
        200,
        65535,
        encap == "llc-snap",
    )
    assert (
        pdu["payload"]
        == (b"\xaa\xaa\x03\x00\x00\x00\x08\x00" if encap == "llc-snap" else b"") + PACKET
    )


@pytest.mark.parametrize("fcs", [False, True])
def test_read_ethernet_frames(tmp_path, fcs):
    """Link type 1 files read back as frames; the link-type word's FCS bits (bit 26
    "FCS length present", 2 16-bit words in bits 28..31) say whether they end in an FCS."""
    frame = bytes(range(64))
    word = 1 | (0x0400_0000 | 2 << 28 if fcs else 0)
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, word)
    record = struct.pack("<IIII", 3, 250, len(frame), len(frame)) + frame
    path = tmp_path / "eth.pcap"
    path.write_bytes(header + record)
    (r,) = wire.read_pcap(path)
    assert r == {"kind": "frame", "time_ps": 3_000_250_000_000, "frame": frame, "fcs": fcs}


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "truncated at byte 0"),
        (b"\x00" * 24, "not a pcap file: magic 0x00000000"),
        (struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 105), "link type 105 not"),
        (
            struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 123) + b"\x01\x00",
            "truncated at byte 24",
        ),
    ],
)
def test_read_pcap_errors(tmp_path, content, message):
    path = tmp_path / "bad.pcap"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        wire.read_pcap(path)


def test_cli_pcap(tmp_path):
    out = tmp_path / "cli.pcap"
    args = [sys.executable, "-m", "cellbench", "wire", "pcap", "--vpi", "1", "--vci", "42"]
    r = subprocess.run([*args, PACKET.hex(), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"wrote 2 cells (ERF ATM cells, link type 197) on VPI/VCI 1/42 to {out}\n"
    assert [x["cell"] for x in wire.read_pcap(out)] == wire.encode(PACKET, 1, 42)
    r = subprocess.run(
        [*args, "--pdus", PACKET.hex(), "-o", str(out)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert "1 AAL5 PDU (SunATM, link type 123)" in r.stdout
    r = subprocess.run(
        [*args, "--cells", "--pdus", "45", "-o", str(out)], capture_output=True, text=True
    )
    assert r.returncode == 2 and "not allowed with argument" in r.stderr
    r = subprocess.run([*args, "4", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "odd number of digits" in r.stderr


def test_read_pcap_reads_only_a_bounded_regular_file(tmp_path, monkeypatch):
    """``read_pcap('/dev/zero')`` read without end (4.2 GB in 5 s)."""
    with pytest.raises(ValueError, match="/dev/zero: a character device, expected a pcap in a"):
        wire.read_pcap("/dev/zero")
    path = tmp_path / "a.pcap"
    wire.write_pcap(path, PACKET, vpi=1, vci=42)
    monkeypatch.setattr(wire, "MAX_PCAP_BYTES", path.stat().st_size - 1)
    with pytest.raises(ValueError, match=rf"expected a pcap of at most {wire.MAX_PCAP_BYTES}"):
        wire.read_pcap(path)
    with pytest.raises(ValueError, match="cannot read"):
        wire.read_pcap(tmp_path / "none.pcap")
