"""`cellbench wire`: ATM cells from the command line.

    cellbench wire encode --vpi V --vci C [--encap E] [--clp 0|1] HEX
    cellbench wire decode [--encap E]            < cells, one per line
    cellbench wire pcap --vpi V --vci C [--encap E] [--clp 0|1] [--cells|--pdus] HEX -o FILE

A cell on a line is 106 hex digits (53 bytes: the 5-byte header with its HEC, then
48 bytes of payload).
"""

from __future__ import annotations

import argparse
import sys

from cellbench import wire
from cellbench.cli.common import UsageError

CELL_HEX_DIGITS = 2 * wire.CELL_LEN
# A 64 KB payload is 128 K hex digits, more than Linux allows in one argument.
_HEX_HELP = "the payload as hex digits, or - to read them from stdin (whitespace ignored)"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "wire",
        help="encode/decode ATM cells (AAL5, RFC 1483) and write pcap files",
        description="Byte-exact ATM cells: AAL5 segmentation and reassembly, RFC 1483 "
        "encapsulation, pcap output that Wireshark decodes.",
    )
    wsub = p.add_subparsers(dest="wire_command", metavar="WIRE_COMMAND")
    wsub.required = True

    enc = wsub.add_parser(
        "encode",
        help="print the AAL5 cells of a payload, one cell a line as 106 hex digits",
        description="Encapsulate the payload (an IP packet, in hex), build the AAL5 "
        "CPCS-PDU and print its cells with UNI headers, one a line.",
    )
    _vc_args(enc)
    enc.add_argument("payload", metavar="HEX", help=_HEX_HELP)
    enc.set_defaults(func=_encode)

    dec = wsub.add_parser(
        "decode",
        help="reassemble cells read on stdin and print the payloads as hex",
        description="Read cells (106 hex digits a line) on stdin, correct single-bit "
        "header errors, reassemble AAL5 PDUs per VPI/VCI, and print each payload "
        "(after decapsulation) as hex, one a line.",
    )
    _encap_arg(dec)
    dec.set_defaults(func=_decode)

    pc = wsub.add_parser(
        "pcap",
        help="write the cells (or the AAL5 PDU) of a payload as a pcap file",
        description="Write the cells that `wire encode` prints as a pcap file "
        "(--cells: ERF ATM-cell records, link type 197, cells back to back at the "
        "OC-3c cell rate; --pdus: the AAL5 payload as one SunATM packet, link type "
        "123). Wireshark/tshark show VPI and VCI (fields atm.vpi, atm.vci).",
    )
    _vc_args(pc)
    granularity = pc.add_mutually_exclusive_group()
    granularity.add_argument(
        "--cells",
        dest="pdus",
        action="store_false",
        help="one packet per cell (the default)",
    )
    granularity.add_argument(
        "--pdus", dest="pdus", action="store_true", help="one packet per AAL5 PDU"
    )
    pc.add_argument("payload", metavar="HEX", help=_HEX_HELP)
    pc.add_argument("-o", "--output", metavar="FILE", required=True, help="pcap file to write")
    pc.set_defaults(func=_pcap, pdus=False)


def _ranged_int(what: str, lo: int, hi: int):
    """An argparse type: a whole number in lo..=hi, with an error naming `what`."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be a whole number {lo}..={hi}, got {text!r}"
            ) from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{what} {value} out of range {lo}..={hi}")
        return value

    return parse


def _encap_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--encap",
        choices=wire.ENCAPS,
        default="llc-snap",
        help="RFC 1483 encapsulation: llc-snap (8-byte LLC/SNAP header, the default) "
        "or vc-mux (none)",
    )


def _vc_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vpi", type=_ranged_int("VPI", 0, 255), required=True, help="0..255 (UNI)")
    p.add_argument("--vci", type=_ranged_int("VCI", 0, 65535), required=True, help="0..65535")
    _encap_arg(p)
    p.add_argument(
        "--clp", type=_ranged_int("CLP", 0, 1), default=0, help="cell loss priority, 0 or 1"
    )


#: The most text read from stdin for one payload: an AAL5 payload is at most 65535
#: bytes, 131070 hex digits, and room for whitespace (stdin may be /dev/zero).
MAX_PAYLOAD_TEXT = 1 << 20
#: The longest line of cells read (a cell is 106 hex digits).
MAX_CELL_LINE = 4096


def _payload(args: argparse.Namespace) -> bytes:
    if args.payload != "-":
        return wire.parse_hex(args.payload)
    text = sys.stdin.read(MAX_PAYLOAD_TEXT + 1)
    if len(text) > MAX_PAYLOAD_TEXT:
        raise UsageError(
            f"stdin: more than {MAX_PAYLOAD_TEXT} characters, expected the hex digits of a "
            "payload (at most 65535 bytes)"
        )
    return wire.parse_hex(text)


def _encode(args: argparse.Namespace) -> int:
    payload = _payload(args)
    for cell in wire.encode(payload, args.vpi, args.vci, args.encap, args.clp):
        print(cell.hex())
    return 0


def _decode(args: argparse.Namespace) -> int:
    from cellbench import _native

    decoder = _native.CellDecoder(args.encap)
    lines = iter(lambda: sys.stdin.readline(MAX_CELL_LINE), "")
    for lineno, line in enumerate(lines, start=1):
        if len(line) == MAX_CELL_LINE and not line.endswith("\n"):
            raise UsageError(
                f"line {lineno}: more than {MAX_CELL_LINE} characters, expected a cell "
                f"({CELL_HEX_DIGITS} hex digits)"
            )
        digits = "".join(line.split())
        if not digits:
            continue
        if len(digits) != CELL_HEX_DIGITS:
            raise UsageError(
                f"line {lineno}: a cell is {CELL_HEX_DIGITS} hex digits (53 bytes), "
                f"found {len(digits)}"
            )
        try:
            cell = wire.parse_hex(digits, what="cell")
            packet, warning = decoder.push(cell)
        except ValueError as e:
            raise UsageError(f"line {lineno}: {e}") from None
        if warning is not None:
            print(f"cellbench: warning: line {lineno}: {warning}", file=sys.stderr)
        if packet is not None:
            print(packet.hex(), flush=True)
    try:
        decoder.finish()
    except ValueError as e:
        raise UsageError(f"end of input: {e}") from None
    return 0


def _pcap(args: argparse.Namespace) -> int:
    payload = _payload(args)
    n = wire.write_pcap(
        args.output, payload, args.vpi, args.vci, args.encap, args.clp, pdus=args.pdus
    )
    if args.pdus:
        what = f"{n} AAL5 PDU (SunATM, link type 123)"
    else:
        what = f"{n} cell{'s' if n != 1 else ''} (ERF ATM cells, link type 197)"
    print(f"wrote {what} on VPI/VCI {args.vpi}/{args.vci} to {args.output}")
    return 0
