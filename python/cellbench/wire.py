"""Byte-exact ATM wire formats from Python: cells, AAL5, RFC 1483, pcap.

The work is done by the Rust core (``cellbench._native``); this module gives it a
Pythonic face and the hex helpers the command line uses. Every bad value raises
``ValueError`` with a one-line message naming the value and what is allowed.

>>> cells = encode(bytes.fromhex("4500"), vpi=0, vci=32)
>>> len(cells), len(cells[0])
(1, 53)
>>> decode(cells)
[b'E\\x00']
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from cellbench import _native
from cellbench.files import FileRefused, check_regular

__all__ = [
    "CELL_LEN",
    "ENCAPS",
    "aal5_cells_for",
    "aal5_crc32",
    "decode",
    "encode",
    "hec",
    "parse_hex",
    "read_pcap",
    "write_pcap",
]

#: The largest pcap ``read_pcap`` reads (1 GiB): some 12 million ERF cell records,
#: whose dicts take some 20 times their bytes in memory.
MAX_PCAP_BYTES = 1 << 30
#: Bytes in an ATM cell (5-byte header + 48-byte payload).
CELL_LEN = 53
#: Encapsulation names accepted everywhere.
ENCAPS = ("llc-snap", "vc-mux")


def hec(header4: bytes) -> int:
    """The I.432 HEC (CRC-8 x^8+x^2+x+1, XOR 0x55) of a 4-byte cell header."""
    return _native.hec(bytes(header4))


def aal5_crc32(data: bytes) -> int:
    """The AAL5 CRC-32 (generator 0x04C11DB7, preset ones, MSB first, complemented)."""
    return _native.aal5_crc32(bytes(data))


def aal5_cells_for(payload_len: int) -> int:
    """Cells of the AAL5 PDU carrying ``payload_len`` bytes (40 -> 1, 9188 -> 192)."""
    return _native.aal5_cells_for(_int("payload length", payload_len, 0, 1 << 32))


def encode(
    payload: bytes, vpi: int, vci: int, encap: str = "llc-snap", clp: int = 0
) -> list[bytes]:
    """The 53-byte UNI cells carrying ``payload`` (an IP packet) on VC vpi/vci.

    The payload is encapsulated (``llc-snap``: RFC 1483 LLC/SNAP header; ``vc-mux``:
    none), put in an AAL5 CPCS-PDU and segmented; the last cell has PTI AUU=1.
    """
    return _native.wire_encode(
        bytes(payload),
        _int("VPI", vpi, 0, 255),
        _int("VCI", vci, 0, 65535),
        encap,
        _int("CLP", clp, 0, 1),
    )


def decode(cells: Iterable[bytes], encap: str = "llc-snap") -> list[bytes]:
    """Reassemble 53-byte cells (per VPI/VCI) and return the decapsulated packets.

    Single-bit header errors are corrected silently; any cell or PDU error raises
    ``ValueError`` naming the cell (counting from 1). Input that ends inside a PDU is
    an error too.
    """
    decoder = _native.CellDecoder(encap)
    packets: list[bytes] = []
    n = 0
    for n, cell in enumerate(cells, start=1):
        try:
            packet, _warning = decoder.push(bytes(cell))
        except ValueError as e:
            raise ValueError(f"cell {n}: {e}") from None
        if packet is not None:
            packets.append(packet)
    decoder.finish()
    return packets


def write_pcap(
    path: str | os.PathLike[str],
    payload: bytes,
    vpi: int,
    vci: int,
    encap: str = "llc-snap",
    clp: int = 0,
    pdus: bool = False,
    start_us: float = 0.0,
) -> int:
    """Write the cells carrying ``payload`` (as :func:`encode` makes them) to a pcap.

    ``pdus=False``: one packet per cell, link type ERF (197) ATM-cell records, timed
    back to back at the OC-3c cell rate from ``start_us``. ``pdus=True``: the AAL5
    payload as one packet, link type SunATM (123). Both decode in Wireshark/tshark
    with VPI/VCI (``atm.vpi``, ``atm.vci``). Returns the number of packets.
    """
    if not start_us >= 0:
        raise ValueError(f"start time {start_us} us must be >= 0")
    return _native.pcap_write(
        os.fspath(path),
        bytes(payload),
        _int("VPI", vpi, 0, 255),
        _int("VCI", vci, 0, 65535),
        encap,
        _int("CLP", clp, 0, 1),
        bool(pdus),
        round(start_us * 1e6),
    )


def read_pcap(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a pcap of ERF ATM cells, SunATM PDUs (what :func:`write_pcap` writes) or
    Ethernet frames.

    Each record is a dict with ``kind`` ("cell", "pdu" or "frame") and ``time_ps``; a
    cell has ``cell`` (53 bytes, HEC recomputed: ERF does not store it), a PDU ``vpi``,
    ``vci``, ``llc`` and ``payload``, an Ethernet frame ``frame`` (from the destination
    address on) and ``fcs`` (whether its last 4 bytes are the FCS).

    Only a regular file of at most ``MAX_PCAP_BYTES`` is read: a device or a pipe
    (``/dev/zero``) has no end to read to.
    """
    path = os.fspath(path)
    try:
        check_regular(path, MAX_PCAP_BYTES, "a pcap")
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror}") from None
    except FileRefused as e:
        raise ValueError(f"{e} (read it with tshark, or a part: editcap -c)") from None
    return _native.pcap_read(path)


def parse_hex(text: str, what: str = "payload") -> bytes:
    """Bytes from hex digits (whitespace ignored), or ValueError naming the position."""
    digits = "".join(text.split())
    for i, ch in enumerate(digits):
        if ch not in "0123456789abcdefABCDEF":
            raise ValueError(
                f"malformed hex in {what}: {ch!r} at position {i + 1} is not a hex digit"
            )
    if len(digits) % 2:
        raise ValueError(
            f"malformed hex in {what}: odd number of digits ({len(digits)}); "
            "each byte is two hex digits"
        )
    return bytes.fromhex(digits)


def _int(what: str, value: int, lo: int, hi: int) -> int:
    """``value`` as an int in lo..=hi, else ValueError (never OverflowError/TypeError)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be a whole number, got {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{what} {value} out of range {lo}..={hi}")
    return value
