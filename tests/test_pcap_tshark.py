"""Real tshark reads the pcap files cellbench writes and agrees on VPI, VCI and payload."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys

import pytest

from cellbench import wire

TSHARK = shutil.which("tshark")


@pytest.fixture(autouse=True)
def _needs_tshark() -> None:
    # A requirement, not a skip: scripts/test.sh installs it (Debian package tshark).
    assert TSHARK is not None, "tshark not found: install Debian's tshark (scripts/test.sh does)"


SRC, DST = "10.1.2.3", "192.168.40.7"
SPORT, DPORT = 40000, 5001
UDP_DATA = b"cellbench over ATM " * 3


def ipv4_udp_packet() -> bytes:
    """A valid IPv4/UDP datagram with correct header and UDP checksums."""

    def checksum(data: bytes) -> int:
        if len(data) % 2:
            data += b"\x00"
        s = sum(struct.unpack(f"!{len(data) // 2}H", data))
        while s >> 16:
            s = (s & 0xFFFF) + (s >> 16)
        return ~s & 0xFFFF

    src = bytes(int(x) for x in SRC.split("."))
    dst = bytes(int(x) for x in DST.split("."))
    udp_len = 8 + len(UDP_DATA)
    pseudo = src + dst + struct.pack("!BBH", 0, 17, udp_len)
    udp = struct.pack("!HHHH", SPORT, DPORT, udp_len, 0) + UDP_DATA
    udp = udp[:6] + struct.pack("!H", checksum(pseudo + udp)) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0x1234, 0, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return ip + udp


def write_with_cli(path, *args: str) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "cellbench", "wire", "pcap", *args, "-o", str(path)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr


def tshark_fields(path, *fields: str) -> list[list[str]]:
    cmd = [TSHARK, "-r", str(path), "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [line.split("\t") for line in r.stdout.splitlines()]


@pytest.mark.parametrize("encap", wire.ENCAPS)
def test_tshark_decodes_pdus_down_to_udp(tmp_path, encap):
    packet = ipv4_udp_packet()
    path = tmp_path / "pdu.pcap"
    write_with_cli(path, "--vpi", "3", "--vci", "321", "--encap", encap, "--pdus", packet.hex())
    rows = tshark_fields(
        path,
        "atm.vpi",
        "atm.vci",
        "ip.src",
        "ip.dst",
        "udp.srcport",
        "udp.dstport",
        "ip.checksum.status",
        "data.data",
        "frame.protocols",
    )
    assert len(rows) == 1
    vpi, vci, src, dst, sport, dport, ip_ck, data, protocols = rows[0]
    assert (vpi, vci) == ("3", "321")
    assert (src, dst, sport, dport) == (SRC, DST, str(SPORT), str(DPORT))
    assert data.replace(":", "") == UDP_DATA.hex()
    assert protocols.endswith("ip:udp:data")
    if encap == "llc-snap":
        assert ":llc:ip:" in protocols
    assert ip_ck in ("", "2")  # 2 = "good" when tshark verifies it; empty when it does not


def test_tshark_decodes_cells(tmp_path):
    packet = ipv4_udp_packet()
    path = tmp_path / "cells.pcap"
    write_with_cli(path, "--vpi", "200", "--vci", "65000", "--clp", "1", packet.hex())
    cells = wire.encode(packet, 200, 65000, clp=1)
    rows = tshark_fields(
        path, "atm.vpi", "atm.vci", "atm.payload_type", "atm.cell_loss_priority", "data.data"
    )
    assert len(rows) == len(cells) == wire.aal5_cells_for(len(packet) + 8)
    for k, (vpi, vci, pti, clp, data) in enumerate(rows):
        assert (vpi, vci, clp) == ("200", "65000", "1")
        assert int(pti) == (1 if k == len(cells) - 1 else 0)  # AUU on the last cell
        assert bytes.fromhex(data.replace(":", "")) == cells[k][5:]
    # The cell payloads tshark shows, joined, are the AAL5 PDU carrying the packet.
    pdu = b"".join(bytes.fromhex(r[4].replace(":", "")) for r in rows)
    assert pdu[: 8 + len(packet)] == bytes.fromhex("aaaa030000000800") + packet
    assert wire.aal5_crc32(pdu[:-4]) == int.from_bytes(pdu[-4:], "big")
