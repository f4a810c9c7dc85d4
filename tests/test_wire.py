"""The ATM wire layer through the Python API and the `cellbench wire` commands."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cellbench import wire

# --- independent reference implementations (bitwise, straight from the standards) ---


def hec_bitwise(header4: bytes) -> int:
    """I.432: CRC-8 with generator x^8+x^2+x+1, MSB first, result XOR 0x55."""
    crc = 0
    for b in header4:
        crc ^= b
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc ^ 0x55


def crc32_bitwise(data: bytes) -> int:
    """I.363.5: generator 0x04C11DB7, preset all ones, MSB first, complemented."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1)
            crc &= 0xFFFFFFFF
    return crc ^ 0xFFFFFFFF


LLC_SNAP_IPV4 = bytes.fromhex("aaaa030000000800")

# The ITU-T I.363.5 AAL5 CRC-32 test vectors (48-byte CPCS-PDUs with a 40-byte
# payload; the CRC covers the first 44 bytes), as reproduced e.g. in the CRC RevEng
# catalogue's CRC-32/BZIP2 codewords: (payload, CPCS-UU, CPI, CRC).
I363_5_VECTORS = [
    (bytes(40), 0x00, 0x00, 0x864D7F99),
    (b"\xff" * 40, 0x00, 0x00, 0xC55E457A),
    (bytes(range(1, 41)), 0x00, 0x00, 0xBF671ED0),
    (bytes(range(1, 41)), 0x11, 0x22, 0xACBA602A),
]


def cellbench(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cellbench", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def header_fields(cell: bytes) -> tuple[int, int, int, int, int]:
    """(GFC, VPI, VCI, PTI, CLP) of a UNI cell, decoded by hand."""
    word = int.from_bytes(cell[:4], "big")
    return word >> 28, (word >> 20) & 0xFF, (word >> 4) & 0xFFFF, (word >> 1) & 7, word & 1


# --- HEC and CRC ---


def test_hec_known_values():
    assert wire.hec(bytes([0, 0, 0, 1])) == 0x52  # the I.432 idle cell header 00 00 00 01 52
    assert wire.hec(bytes(4)) == 0x55  # the coset alone
    for h in (b"\x00\x10\x02\xa2", b"\xff\xff\xff\xff", b"\x12\x34\x56\x78"):
        assert wire.hec(h) == hec_bitwise(h)


def test_hec_wants_four_bytes():
    with pytest.raises(ValueError, match="4 header bytes, got 5"):
        wire.hec(bytes(5))


@pytest.mark.parametrize("payload, uu, cpi, crc", I363_5_VECTORS)
def test_aal5_crc32_i363_5_vectors(payload, uu, cpi, crc):
    covered = payload + bytes([uu, cpi]) + (40).to_bytes(2, "big")
    assert wire.aal5_crc32(covered) == crc
    assert crc32_bitwise(covered) == crc


def test_cells_for():
    assert wire.aal5_cells_for(40) == 1
    assert wire.aal5_cells_for(41) == 2
    assert wire.aal5_cells_for(9188) == 192  # VC-mux full MTU
    assert wire.aal5_cells_for(9180 + 8) == 192  # LLC/SNAP full MTU
    assert wire.aal5_cells_for(65535) == 1366
    with pytest.raises(ValueError, match="allowed 1..=65535"):
        wire.aal5_cells_for(65536)


# --- encode ---


def test_encode_layout():
    packet = bytes(range(100))
    cells = wire.encode(packet, vpi=5, vci=300, clp=1)
    sdu = LLC_SNAP_IPV4 + packet  # 108 bytes -> 108 + 8 trailer = 116 -> 3 cells
    assert len(cells) == 3
    for i, cell in enumerate(cells):
        assert len(cell) == 53
        gfc, vpi, vci, pti, clp = header_fields(cell)
        assert (gfc, vpi, vci, clp) == (0, 5, 300, 1)
        assert pti == (1 if i == 2 else 0)  # AUU on the last cell only
        assert cell[4] == hec_bitwise(cell[:4])
    pdu = b"".join(c[5:] for c in cells)
    assert pdu[:108] == sdu
    assert pdu[108:136] == bytes(28)  # pad
    assert pdu[136:140] == bytes([0, 0, 0, 108])  # UU, CPI, length
    assert int.from_bytes(pdu[140:], "big") == crc32_bitwise(pdu[:140])


def test_encode_vc_mux_has_no_header():
    cells = wire.encode(b"\x45" * 40, vpi=0, vci=32, encap="vc-mux")
    assert len(cells) == 1
    assert cells[0][5:45] == b"\x45" * 40


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"vpi": 256, "vci": 1}, "VPI 256 out of range 0..=255"),
        ({"vpi": -1, "vci": 1}, "VPI -1 out of range 0..=255"),
        ({"vpi": 1, "vci": 65536}, "VCI 65536 out of range 0..=65535"),
        ({"vpi": 1, "vci": 1, "clp": 2}, "CLP 2 out of range 0..=1"),
        ({"vpi": 1, "vci": 1, "encap": "null"}, 'unknown encapsulation "null"'),
        ({"vpi": 2**70, "vci": 1}, "out of range"),
        ({"vpi": "1", "vci": 1}, "VPI must be a whole number"),
    ],
)
def test_encode_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        wire.encode(b"x", **kwargs)


def test_encode_sizes():
    with pytest.raises(ValueError, match="payload is empty"):
        wire.encode(b"", vpi=0, vci=32)
    assert len(wire.encode(bytes(65535), 0, 32, encap="vc-mux")) == 1366
    with pytest.raises(ValueError, match="65528 bytes \\+ 8-byte llc-snap header = 65536"):
        wire.encode(bytes(65528), vpi=0, vci=32)


# --- decode ---


@settings(max_examples=60, deadline=None)
@given(
    payload=st.binary(min_size=1, max_size=3000),
    vpi=st.integers(0, 255),
    vci=st.integers(0, 65535),
    encap=st.sampled_from(wire.ENCAPS),
    clp=st.integers(0, 1),
)
def test_encode_decode_roundtrip(payload, vpi, vci, encap, clp):
    assert wire.decode(wire.encode(payload, vpi, vci, encap, clp), encap) == [payload]


def test_decode_interleaved_vcs():
    a = wire.encode(b"A" * 100, vpi=1, vci=100)
    b = wire.encode(b"B" * 10, vpi=1, vci=101)
    # b ends first, so its packet comes out first.
    assert wire.decode([a[0], b[0], a[1], a[2]]) == [b"B" * 10, b"A" * 100]


def flip(cell: bytes, *bits: int) -> bytes:
    out = bytearray(cell)
    for bit in bits:
        out[bit // 8] ^= 0x80 >> (bit % 8)
    return bytes(out)


@pytest.mark.parametrize("bit", [0, 7, 12, 31, 32, 39])
def test_decode_corrects_single_bit_header_errors(bit):
    cells = wire.encode(b"payload", vpi=7, vci=77)
    assert wire.decode([flip(cells[0], bit)]) == [b"payload"]


def test_decode_rejects_double_bit_header_errors():
    cells = wire.encode(b"x" * 100, vpi=7, vci=77)
    with pytest.raises(ValueError, match="cell 2: uncorrectable header error"):
        wire.decode([cells[0], flip(cells[1], 3, 20), cells[2]])


def test_decode_pdu_errors():
    cells = wire.encode(b"x" * 100, vpi=7, vci=77)
    with pytest.raises(ValueError, match="cell 2: VC 7/77: wrong AAL5 length"):
        wire.decode([cells[0], cells[2]])
    with pytest.raises(ValueError, match="cell 3: VC 7/77: bad AAL5 CRC-32"):
        wire.decode([cells[0], flip(cells[1], 100), cells[2]])
    with pytest.raises(ValueError, match="VC 7/77 has 2 cells but no end-of-PDU cell"):
        wire.decode(cells[:2])
    with pytest.raises(ValueError, match="cell 1: a cell is 53 bytes, got 52"):
        wire.decode([cells[0][:52]])
    with pytest.raises(ValueError, match="LLC header 78-78-78 is not SNAP"):
        wire.decode(wire.encode(b"x" * 10, vpi=7, vci=77, encap="vc-mux"))


@pytest.mark.parametrize(
    "text, message",
    [
        ("abc", "odd number of digits \\(3\\)"),
        ("12zz", "'z' at position 3 is not a hex digit"),
        ("12 3g", "'g' at position 4"),
    ],
)
def test_parse_hex_errors(text, message):
    with pytest.raises(ValueError, match=message):
        wire.parse_hex(text)


def test_parse_hex_ignores_whitespace():
    assert wire.parse_hex(" 45 00\n0a ") == b"\x45\x00\x0a"


# --- the command line ---


def test_cli_encode_prints_cells():
    r = cellbench("wire", "encode", "--vpi", "1", "--vci", "42", "45000014")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines == [c.hex() for c in wire.encode(bytes.fromhex("45000014"), 1, 42)]
    assert all(len(x) == 106 and x == x.lower() for x in lines)
    # VPI 1, VCI 42, PTI 1 (end of PDU), CLP 0; HEC; LLC/SNAP; the payload.
    assert lines[0].startswith("001002a2" + f"{hec_bitwise(bytes.fromhex('001002a2')):02x}")
    assert lines[0][10:34] == "aaaa030000000800" + "45000014"


def test_cli_roundtrip_both_encaps():
    packet = bytes(range(256)) * 3
    for encap in wire.ENCAPS:
        enc = cellbench(
            "wire",
            "encode",
            "--vpi",
            "0",
            "--vci",
            "32",
            "--encap",
            encap,
            "--clp",
            "1",
            packet.hex(),
        )
        assert enc.returncode == 0, enc.stderr
        assert len(enc.stdout.splitlines()) == wire.aal5_cells_for(
            len(packet) + (encap == "llc-snap") * 8
        )
        dec = cellbench("wire", "decode", "--encap", encap, stdin=enc.stdout)
        assert dec.returncode == 0, dec.stderr
        assert dec.stdout == packet.hex() + "\n"


def test_cli_decode_several_pdus_blank_lines_and_warning():
    a = wire.encode(b"first" * 20, 1, 40)  # 3 cells: lines 1, 3, 5
    b = wire.encode(b"second", 1, 41)
    text = "\n\n".join(c.hex() for c in a) + "\n   \n" + flip(b[0], 33).hex() + "\n"
    r = cellbench("wire", "decode", stdin=text)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [(b"first" * 20).hex(), b"second".hex()]
    assert r.stderr.startswith("cellbench: warning: line 7: single-bit header error corrected")


def one_line_error(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--vpi", "256", "--vci", "1", "45"], "VPI 256 out of range 0..=255"),
        (["--vpi", "1", "--vci", "65536", "45"], "VCI 65536 out of range 0..=65535"),
        (["--vpi", "x", "--vci", "1", "45"], "VPI must be a whole number 0..=255, got 'x'"),
        (["--vpi", "1", "--vci", "1", "--clp", "2", "45"], "CLP 2 out of range 0..=1"),
        (["--vpi", "1", "--vci", "1", "--encap", "null", "45"], "invalid choice: 'null'"),
        (["--vpi", "1", "--vci", "1", "450"], "odd number of digits (3)"),
        (["--vpi", "1", "--vci", "1", "45q0"], "'q' at position 3 is not a hex digit"),
        (["--vpi", "1", "--vci", "1", ""], "payload is empty"),
    ],
)
def test_cli_encode_bad_input(args, message):
    assert message in one_line_error(cellbench("wire", "encode", *args))


def test_cli_encode_too_large_after_encapsulation():
    r = cellbench("wire", "encode", "--vpi", "1", "--vci", "1", "-", stdin="00" * 65528)
    assert "65528 bytes + 8-byte llc-snap header = 65536 bytes" in one_line_error(r)
    r = cellbench(
        "wire",
        "encode",
        "--vpi",
        "1",
        "--vci",
        "1",
        "--encap",
        "vc-mux",
        "-",
        stdin="00" * 65535,
    )
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1366


def test_cli_decode_bad_input():
    cells = [c.hex() for c in wire.encode(b"z" * 100, 3, 33)]
    cases = [
        ("\n" + cells[0][:-2] + "\n", "line 2: a cell is 106 hex digits (53 bytes), found 104"),
        (cells[0][:-1] + "g\n", "line 1: malformed hex in cell: 'g' at position 106"),
        (cells[0] + "\n" + cells[2] + "\n", "line 2: VC 3/33: wrong AAL5 length"),
        (
            "\n".join([cells[0], flip(bytes.fromhex(cells[1]), 0, 1).hex(), cells[2]]),
            "line 2: uncorrectable header error",
        ),
        (
            "\n".join([cells[0], flip(bytes.fromhex(cells[1]), 200).hex(), cells[2]]),
            "line 3: VC 3/33: bad AAL5 CRC-32",
        ),
        ("\n".join(cells[:2]), "end of input: input ended inside a PDU: VC 3/33 has 2 cells"),
    ]
    for stdin, message in cases:
        line = one_line_error(cellbench("wire", "decode", stdin=stdin))
        assert line.startswith("cellbench: error: ") and message in line, line
