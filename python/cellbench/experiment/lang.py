"""The experiment language: a hand-written lexer and recursive-descent parser.

NetSpec's block-structured language (``cluster { test NAME { key = value; } }``)
plus cellbench's ``testbed { }`` and ``sweep { }`` blocks. The text is data: it is
tokenised and parsed into a small syntax tree, never executed. Every error is one
line, ``file:line:col: found X, expected Y``.

Grammar (EBNF; ``{ }`` repeat, ``[ ]`` optional; comments run from ``#`` to the
end of the line)::

    file     = { block } EOF ;
    block    = KIND [ NAME ] "{" { setting | block } "}" ;
    setting  = NAME "=" value ";" ;
    value    = list | NUMBER | STRING | VAR | NAME [ call | port ] ;
    call     = "(" [ arg { "," arg } ] ")" ;
    arg      = NAME "=" value | value ;
    port     = ":" NUMBER ;                      (* host:port *)
    list     = "[" [ value { "," value } [ "," ] ] "]" ;
    NUMBER   = ["-"] digits [ "." digits ] [ ("e"|"E") ["-"] digits ] [ "K" | "M" | "G" ]
             | digits "/" digits ;                 (* a fraction: rif = 1/16 *)
    VAR      = "$" NAME ;
    NAME     = alnum { alnum | "_" | "." | "-" } ;   (* roadrunner.atm, tail-drop *)

Which KINDs may appear where, and whether a block takes settings, is the table
``BLOCKS`` below; the meaning of each setting is checked by ``model`` and
``testbed``. K, M and G multiply by 2^10, 2^20 and 2^30 (byte sizes, as ttcp and
NetSpec use them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple, Union

from cellbench.files import FileRefused, read_bounded


class Pos(NamedTuple):
    """Where a token starts: file name, 1-based line and column (a tuple: a file has
    one per token, and a tuple is the cheapest immutable record to make)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class ExperimentError(ValueError):
    """A bad experiment file: one line, with its position. Nothing runs."""

    def __init__(self, pos: Pos | None, message: str):
        self.pos = pos
        self.message = message
        super().__init__(f"{pos}: {message}" if pos is not None else message)


def expected(pos: Pos, found: str, what: str) -> ExperimentError:
    return ExperimentError(pos, f"found {found}, expected {what}")


# --- tokens -----------------------------------------------------------------------------------

PUNCT = "{}()[];=,:"
#: Deepest nesting of blocks, lists and calls: far beyond any real experiment, and
#: shallow enough that every recursive walk of the tree (parser, checker, copy) stays
#: well inside Python's recursion limit.
MAX_DEPTH = 64
#: The largest experiment text: a thousand times the largest example, and small enough
#: that lexing, checking and copying it take a second, not minutes and gigabytes.
MAX_TEXT_BYTES = 1 << 20
_WORD = re.compile(r"[A-Za-z0-9_.\-]+")
_NUMBER = re.compile(r"-?(\d+(\.\d*)?|\.\d+)([eE]-?\d+)?([KMG])?\Z")
_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


class Token(NamedTuple):
    kind: str  # "name", "number", "string", "var", "punct", "eof"
    text: str
    pos: Pos
    value: object = None

    def describe(self) -> str:
        if self.kind == "eof":
            return "end of file"
        if self.kind == "number":
            return f"number {self.text}"
        if self.kind == "string":
            return f"string {self.text}"
        if self.kind == "var":
            return f"variable {self.text}"
        return f"'{self.text}'"


def number_value(text: str) -> int | float:
    """The value of a NUMBER token: an int when whole (16K -> 16384), else a float."""
    suffix = _SUFFIX.get(text[-1], 1)
    body = text[:-1] if suffix != 1 else text
    if re.fullmatch(r"-?\d+", body):
        return int(body) * suffix
    value = float(body) * suffix
    return int(value) if suffix != 1 and value.is_integer() else value


def number_text(text: str) -> int | float | None:
    """A NUMBER as the language writes it (``16K``, ``1e6``), or None if ``text`` is not one.
    A float that is whole is an int (``1e3`` -> 1000), so byte counts may be written so."""
    if not _NUMBER.match(text):
        return None
    value = number_value(text)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


#: One token (or a stretch of blanks, a comment, a newline) at a time: the lexer is
#: one regular expression, so a long file costs a pass of the C matcher, not a Python
#: loop per character.
_TOKEN = re.compile(
    r"(?P<nl>\n)|(?P<blank>[ \t\r\f]+)|(?P<comment>#[^\n]*)|(?P<punct>[{}()\[\];=,:])"
    r'|(?P<string>"[^"\n]*")|(?P<var>\$[A-Za-z0-9_.\-]+)|(?P<frac>\d+/\d+(?![A-Za-z0-9_.\-]))'
    r"|(?P<word>[A-Za-z0-9_.\-]+)"
)


def tokenize(text: str, file: str) -> list[Token]:
    tokens: list[Token] = []
    append = tokens.append
    line, line_start, i = 1, 0, 0
    n = len(text)
    match = _TOKEN.match
    while i < n:
        m = match(text, i)
        if m is None:
            _bad_token(text, i, file, line, i - line_start + 1)
        kind = m.lastgroup
        end = m.end()
        if kind == "nl":
            line, line_start = line + 1, end
        elif kind == "word":
            word = m.group()
            pos = Pos(file, line, i - line_start + 1)
            if _NUMBER.match(word):
                append(Token("number", word, pos, number_value(word)))
            else:
                append(Token("name", word, pos, word))
        elif kind == "punct":
            append(Token("punct", m.group(), Pos(file, line, i - line_start + 1)))
        elif kind == "frac":
            # A fraction (ABR's rif = 1/16): its value; a zero denominator is refused.
            num, den = m.group().split("/")
            pos = Pos(file, line, i - line_start + 1)
            if int(den) == 0:
                raise expected(pos, m.group(), "a fraction with a denominator above 0")
            append(Token("number", m.group(), pos, int(num) / int(den)))
        elif kind == "string":
            s = m.group()
            append(Token("string", s, Pos(file, line, i - line_start + 1), s[1:-1]))
        elif kind == "var":
            v = m.group()
            append(Token("var", v, Pos(file, line, i - line_start + 1), v[1:]))
        i = end
    tokens.append(Token("eof", "", Pos(file, line, i - line_start + 1)))
    return tokens


def _bad_token(text: str, i: int, file: str, line: int, col: int):
    """The error at a character no token starts with."""
    c = text[i]
    if c == '"':
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
        raise expected(Pos(file, line, col + end - i), "end of line", "'\"' closing the string")
    if c == "$":
        found = repr(text[i + 1]) if i + 1 < len(text) else "end of file"
        raise expected(Pos(file, line, col + 1), found, "a variable name after '$'")
    raise expected(
        Pos(file, line, col), repr(c), "a name, a number, a string or one of { } ( ) [ ] ; = , :"
    )


# --- syntax tree ------------------------------------------------------------------------------


@dataclass
class Number:
    value: int | float
    text: str
    pos: Pos


@dataclass
class Name:
    text: str
    pos: Pos


@dataclass
class String:
    text: str
    pos: Pos


@dataclass
class Var:
    name: str
    pos: Pos


@dataclass
class HostPort:
    host: str
    port: int
    pos: Pos
    #: The interface the address names when its host name is a testbed host's
    #: ``ethernet_name`` (the model resolves it); None: the host's own name.
    interface: str | None = None

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass
class Arg:
    key: str | None
    value: Value
    pos: Pos


@dataclass
class Call:
    name: str
    args: list[Arg]
    pos: Pos


@dataclass
class List:
    items: list[Value]
    pos: Pos


Value = Union[Number, Name, String, Var, HostPort, Call, List]


@dataclass
class Setting:
    key: str
    value: Value
    pos: Pos


@dataclass
class Block:
    kind: str
    name: str | None
    pos: Pos
    body: list[Setting | Block] = field(default_factory=list)
    name_pos: Pos | None = None

    def settings(self) -> list[Setting]:
        return [x for x in self.body if isinstance(x, Setting)]

    def blocks(self) -> list[Block]:
        return [x for x in self.body if isinstance(x, Block)]


@dataclass
class Document:
    file: str
    text: str
    blocks: list[Block]


def render(v: Value) -> str:
    """A value as the language writes it (for messages and result columns)."""
    if isinstance(v, Number):
        return v.text
    if isinstance(v, (Name, String)):
        return v.text if isinstance(v, Name) else f'"{v.text}"'
    if isinstance(v, Var):
        return f"${v.name}"
    if isinstance(v, HostPort):
        return str(v)
    if isinstance(v, List):
        return "[" + ", ".join(render(x) for x in v.items) + "]"
    args = ", ".join((f"{a.key}={render(a.value)}" if a.key else render(a.value)) for a in v.args)
    return f"{v.name}({args})"


# --- parser -----------------------------------------------------------------------------------

#: kind -> (block kinds allowed inside, settings allowed, name: "optional"/"required"/"none")
BLOCKS: dict[str, tuple[tuple[str, ...], bool, str]] = {
    "": (("cluster", "testbed", "sweep", "tester"), False, "none"),
    "cluster": (("test", "parallel", "serial"), False, "none"),
    "parallel": (("test", "parallel", "serial"), False, "none"),
    "serial": (("test", "parallel", "serial"), False, "none"),
    "test": ((), True, "optional"),
    "testbed": (("switch", "host", "defaults", "trunk"), True, "optional"),
    "trunk": ((), True, "optional"),
    "switch": ((), True, "optional"),
    "host": ((), True, "required"),
    "defaults": ((), True, "none"),
    "sweep": ((), True, "none"),
    "tester": ((), True, "none"),
}


def _alternatives(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]


class _Parser:
    def __init__(self, tokens: list[Token]):
        self.tokens = tokens
        self.i = 0
        self.depth = 0

    def enter(self, t: Token) -> None:
        """One level deeper (a block, a list or a call); refuse beyond MAX_DEPTH."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise expected(
                t.pos,
                f"{t.describe()} nested {self.depth} deep",
                f"at most {MAX_DEPTH} levels of nesting",
            )

    def peek(self, k: int = 0) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def next(self) -> Token:
        t = self.peek()
        self.i += 1
        return t

    def is_punct(self, c: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t.kind == "punct" and t.text == c

    def expect_punct(self, c: str, what: str | None = None) -> Token:
        t = self.peek()
        if not (t.kind == "punct" and t.text == c):
            raise expected(t.pos, t.describe(), what or f"'{c}'")
        return self.next()

    def body(self, kind: str) -> list[Setting | Block]:
        kinds, settings, _ = BLOCKS[kind]
        items: list[Setting | Block] = []
        closing = "eof" if kind == "" else "}"
        while True:
            t = self.peek()
            if (t.kind == "eof" and kind == "") or (t.kind == "punct" and t.text == "}" and kind):
                return items
            if t.kind == "name" and settings and self.is_punct("=", 1):
                items.append(self.setting())
            elif t.kind == "name" and t.text in kinds:
                items.append(self.block())
            else:
                allowed = [f"'{k}'" for k in kinds]
                if settings:
                    allowed.append("a setting 'KEY = VALUE;'")
                allowed.append("end of file" if closing == "eof" else "'}'")
                raise expected(t.pos, t.describe(), _alternatives(allowed))

    def block(self) -> Block:
        head = self.next()
        kind = head.text
        _, _, naming = BLOCKS[kind]
        name = None
        name_pos = None
        t = self.peek()
        if naming != "none" and t.kind == "name":
            name, name_pos = t.text, t.pos
            self.next()
        elif naming == "required":
            raise expected(t.pos, t.describe(), f"a name after '{kind}'")
        self.expect_punct("{", f"'{{' to open the {kind} block")
        self.enter(head)
        body = self.body(kind)
        self.expect_punct("}", f"'}}' to close the {kind} block")
        self.depth -= 1
        return Block(kind, name, head.pos, body, name_pos)

    def setting(self) -> Setting:
        key = self.next()
        self.expect_punct("=")
        value = self.value()
        self.expect_punct(";", "';' after the value")
        return Setting(key.text, value, key.pos)

    def value(self) -> Value:
        t = self.peek()
        if t.kind == "number":
            self.next()
            return Number(t.value, t.text, t.pos)  # type: ignore[arg-type]
        if t.kind == "string":
            self.next()
            return String(t.value, t.pos)  # type: ignore[arg-type]
        if t.kind == "var":
            self.next()
            return Var(t.value, t.pos)  # type: ignore[arg-type]
        if t.kind == "punct" and t.text == "[":
            self.next()
            self.enter(t)
            items: list[Value] = []
            while not self.is_punct("]"):
                items.append(self.value())
                if self.is_punct(","):
                    self.next()
                elif not self.is_punct("]"):
                    u = self.peek()
                    raise expected(u.pos, u.describe(), "',' or ']'")
            self.next()
            self.depth -= 1
            return List(items, t.pos)
        if t.kind == "name":
            self.next()
            if self.is_punct("("):
                return Call(t.text, self.args(), t.pos)
            if self.is_punct(":"):
                self.next()
                p = self.peek()
                if p.kind != "number" or not isinstance(p.value, int) or not 0 <= p.value <= 65535:
                    raise expected(p.pos, p.describe(), "a port number 0..65535 after ':'")
                self.next()
                return HostPort(t.text, p.value, t.pos)
            return Name(t.text, t.pos)
        raise expected(
            t.pos, t.describe(), "a value (a number, a name, host:port, a call or a list)"
        )

    def args(self) -> list[Arg]:
        self.enter(self.expect_punct("("))
        args: list[Arg] = []
        while not self.is_punct(")"):
            t = self.peek()
            if t.kind == "name" and self.is_punct("=", 1):
                self.next()
                self.next()
                args.append(Arg(t.text, self.value(), t.pos))
            else:
                args.append(Arg(None, self.value(), t.pos))
            if self.is_punct(","):
                self.next()
            elif not self.is_punct(")"):
                u = self.peek()
                raise expected(u.pos, u.describe(), "',' or ')'")
        self.next()
        self.depth -= 1
        return args


def decode(data: bytes, file: str) -> str:
    """A file's bytes as text (UTF-8); anything else is an error at the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        line = data.count(b"\n", 0, e.start) + 1
        col = len(data[line_start : e.start].decode("utf-8", "replace")) + 1
        raise ExperimentError(
            Pos(file, line, col),
            f"found byte 0x{data[e.start]:02x}, expected UTF-8 text "
            "(is it a binary file, or in another encoding such as latin-1?)",
        ) from None


def read(path, file: str, what: str = "the file") -> str:
    """An experiment or testbed file's text; an unreadable or undecodable file is an
    ExperimentError naming it."""
    try:
        data = read_bounded(path, MAX_TEXT_BYTES, what)
    except FileRefused as e:
        if e.too_large:
            _check_size(MAX_TEXT_BYTES + 1, file)
        raise ExperimentError(None, f"{file}: {e.reason}") from None
    except OSError as e:
        raise ExperimentError(None, f"{file}: cannot read {what} ({e.strerror})") from None
    except ValueError as e:  # a name no file can have (a NUL byte)
        raise ExperimentError(None, f"{file!r}: cannot read {what} ({e})") from None
    _check_size(len(data), file)
    return decode(data, file)


def _check_size(size: int, file: str) -> None:
    if size > MAX_TEXT_BYTES:
        raise ExperimentError(
            Pos(file, 1, 1),
            f"found a text of more than {MAX_TEXT_BYTES} bytes, expected at most that: an "
            "experiment describes its runs (ranges, not lists of values)",
        )


def parse(text: str, file: str = "<text>") -> Document:
    """Parse an experiment file; raises ExperimentError at the first syntax error."""
    _check_size(len(text), file)
    p = _Parser(tokenize(text, file))
    blocks = p.body("")
    return Document(file, text, [b for b in blocks if isinstance(b, Block)])


def parse_value(text: str, file: str) -> Value:
    """One value on its own (a --set value): the same grammar as inside a file."""
    p = _Parser(tokenize(text, file))
    v = p.value()
    t = p.peek()
    if t.kind != "eof":
        raise expected(t.pos, t.describe(), "the end of the value")
    return v
