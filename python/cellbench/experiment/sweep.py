"""Sweeps: parameters with several values, their product, and replications.

In the file, one ``sweep { }`` block; every key but ``replications`` and ``seed``
is a parameter, and the run set is the product of all parameters' values (the
first key varies slowest), each point run ``replications`` times::

    sweep {
        snd = [16K, 20K, 24K];            # a list
        rcv = range(16K, 48K, 4K);        # start, stop, step; stop included when reached
        sender.type.blocksize = [4K, 8K]; # a path: TEST.key.arg (or TEST.key)
        testbed.switch.buffer_cells = [128, 256];
        replications = 5;                 # runs per point, replication r uses stream r
        seed = 1;                         # master seed
    }

A value the study's paper leaves open is a named assumption: ``assume(DEFAULT,
range=[LOW, HIGH], source="...")`` (a number) or ``assume(DEFAULT, among=[A, B, ...],
source="...")`` (a choice), where ``source`` says where the range comes from (an OS's
documented default, a vendor manual, the paper's own estimate, geography). It runs at its
default, like a one-value parameter; ``assumptions(doc)`` lists them and ``cellbench
fidelity --envelope`` runs their ranges::

    sweep {
        atm_sndbuf = assume(16K, range=[16K, 52428], source="000 §2.2: 16K to 52428");
    }

A parameter is either a variable the experiment uses as ``$snd``, or a path into
the file: ``TEST.key``, ``TEST.key.arg``, ``testbed.key``, ``testbed.switch.key``,
``testbed.defaults.key`` or ``testbed.host.NAME.key``. On the command line,
``--set key=value``, ``--set key=a,b,c`` (a list) and ``--set key=start:stop:step``
(a range, stop included when reached) replace the file's values for that key or
add a parameter. A range without a step (``start:stop``, ``range(start, stop)``)
steps by 1, for at most ``MAX_UNSTEPPED`` values.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import re
from dataclasses import dataclass

from cellbench.experiment.lang import (
    Arg,
    Block,
    Call,
    Document,
    ExperimentError,
    HostPort,
    List,
    Name,
    Number,
    Pos,
    Setting,
    String,
    Value,
    Var,
    expected,
    number_value,
    parse_value,
    render,
)
from cellbench.experiment.model import SEED_MAX

_NUM = r"-?(\d+(\.\d*)?|\.\d+)([eE]-?\d+)?[KMG]?"
_RANGE = re.compile(rf"\s*({_NUM})\s*:\s*({_NUM})\s*(:\s*({_NUM})\s*)?\Z")
#: Guard against a typo that would expand a range, or the product of all parameters,
#: into millions of points.
MAX_VALUES = 100_000
#: A range without a step steps by 1 up to this many values; past it the step must be
#: written: ``snd=16K:48K`` meant 32,769 buffer sizes a byte apart, surely not meant.
MAX_UNSTEPPED = 1000


@dataclass
class Param:
    key: str
    values: list[Value]
    pos: Pos


@dataclass
class Sweep:
    params: list[Param]
    replications: int | None = None
    seed: int | None = None

    def size(self) -> int:
        """How many points the product has; a product beyond MAX_VALUES is an error
        naming the parameter that takes it there (found without building it)."""
        n = 1
        for p in self.params:
            n *= len(p.values)
            if n > MAX_VALUES:
                shown = " x ".join(f"{q.key}: {len(q.values)}" for q in self.params[:8])
                more = " x ..." if len(self.params) > 8 else ""
                raise ExperimentError(
                    p.pos,
                    f"found a sweep of more than {MAX_VALUES} points ({shown}{more} values), "
                    f"expected at most {MAX_VALUES} (the product of all parameters)",
                )
        return n

    def points(self) -> list[dict[str, Value]]:
        """Every combination, first parameter slowest."""
        self.size()
        keys = [p.key for p in self.params]
        return [
            dict(zip(keys, combo)) for combo in itertools.product(*(p.values for p in self.params))
        ]

    def point(self, i: int) -> dict[str, Value]:
        """``points()[i]`` without building the list (a runner plans lazily)."""
        picked = []
        for p in reversed(self.params):
            i, k = divmod(i, len(p.values))
            picked.append((p.key, p.values[k]))
        return dict(reversed(picked))


def _range(start: Number, stop: Number, step: Number | None, pos: Pos) -> list[Value]:
    """The values start, start + step, ... up to stop; ``step`` None: 1, for at most
    ``MAX_UNSTEPPED`` values."""
    a, b, s = start.value, stop.value, (1 if step is None else step.value)
    if s == 0 or (b - a) * s < 0:
        raise ExperimentError(
            pos, f"found range {a}..{b} step {s}, expected a step that moves from start to stop"
        )
    count = int((b - a) / s + 1e-9) + 1
    if step is None and count > MAX_UNSTEPPED:
        raise ExperimentError(
            pos,
            f"found range {a}..{b} without a step: {count} values 1 apart, expected a step "
            f"(start:stop:step, range(start, stop, step)); 1 is implied up to "
            f"{MAX_UNSTEPPED} values",
        )
    if count > MAX_VALUES:
        raise ExperimentError(
            pos, f"found a range of {count} values, expected at most {MAX_VALUES}"
        )
    out: list[Value] = []
    for i in range(count):
        v = a + i * s
        if isinstance(v, float) and v.is_integer() and all(isinstance(x, int) for x in (a, s)):
            v = int(v)
        v = round(v, 12) if isinstance(v, float) else v
        out.append(Number(v, repr(v) if isinstance(v, float) else str(v), pos))
    return out


@dataclass
class Assumption:
    """A value the paper leaves open: its default, its plausible range (``low``..``high``
    for a number, ``among`` for a choice) and where that range comes from."""

    key: str
    default: Value
    source: str
    pos: Pos
    low: Number | None = None
    high: Number | None = None
    among: list[Value] = dataclasses.field(default_factory=list)

    def values(self) -> list[Value]:
        """The range's ends (or every choice), the default among them where it is one."""
        if self.among:
            return list(self.among)
        assert self.low is not None and self.high is not None
        return [self.low] if self.low.value == self.high.value else [self.low, self.high]

    def range_text(self) -> str:
        if self.among:
            return "{" + ", ".join(render(v) for v in self.among) + "}"
        assert self.low is not None and self.high is not None
        return f"[{render(self.low)}, {render(self.high)}]"


def _same(a: Value, b: Value) -> bool:
    return render(a) == render(b) or (
        isinstance(a, Number) and isinstance(b, Number) and a.value == b.value
    )


def assumption(key: str, call: Call) -> Assumption:
    """``assume(DEFAULT, range=[LOW, HIGH] | among=[...], source="...")``, checked: the
    default inside its range, the range's ends in order, a source given."""
    want = 'assume(DEFAULT, range=[LOW, HIGH] or among=[A, B, ...], source="...")'
    positional = [a for a in call.args if a.key is None]
    named = {a.key: a for a in call.args if a.key is not None}
    if len(positional) != 1 or set(named) - {"range", "among", "source"}:
        raise expected(call.pos, render(call), want)
    default = positional[0].value
    src = named.get("source")
    if src is None or not isinstance(src.value, String) or not src.value.text.strip():
        raise expected(
            (src or positional[0]).pos,
            render(src.value) if src else f"assume() of {key} without a source",
            'source="..." saying where the range comes from',
        )
    if ("range" in named) == ("among" in named):
        raise expected(call.pos, render(call), f"one of range=[LOW, HIGH] or among=[...]: {want}")
    out = Assumption(key, default, src.value.text, call.pos)
    if "range" in named:
        rng = named["range"].value
        ends = rng.items if isinstance(rng, List) else []
        if len(ends) != 2 or not all(isinstance(e, Number) for e in ends):
            raise expected(rng.pos, render(rng), "range=[LOW, HIGH], two numbers")
        low, high = ends
        if not isinstance(default, Number):
            raise expected(default.pos, render(default), f"a number as {key}'s default")
        if low.value > high.value:  # type: ignore[union-attr]
            raise expected(rng.pos, render(rng), "LOW <= HIGH")
        if not low.value <= default.value <= high.value:  # type: ignore[union-attr]
            raise expected(
                default.pos, f"{key} default {render(default)}", f"a default in {render(rng)}"
            )
        out.low, out.high = low, high  # type: ignore[assignment]
    else:
        among = named["among"].value
        items = among.items if isinstance(among, List) else []
        if len(items) < 2 or any(isinstance(v, List) for v in items):
            raise expected(among.pos, render(among), "among=[A, B, ...], two or more values")
        if not any(_same(default, v) for v in items):
            raise expected(
                default.pos, f"{key} default {render(default)}", f"one of {render(among)}"
            )
        out.among = items
    return out


def _is_assumption(v: Value) -> bool:
    return isinstance(v, Call) and v.name == "assume"


def assumptions(doc: Document) -> list[Assumption]:
    """The file's named assumptions, in its order (each checked)."""
    return [
        assumption(s.key, s.value)  # type: ignore[arg-type]
        for b in doc.blocks
        if b.kind == "sweep"
        for s in b.settings()
        if _is_assumption(s.value)
    ]


def expand(value: Value) -> list[Value]:
    """A sweep value's members: a list's items, a range's numbers, or the value itself."""
    if isinstance(value, List):
        out: list[Value] = []
        for item in value.items:
            if isinstance(item, List):
                raise expected(item.pos, "a list inside a list", "a value")
            out.extend(expand(item) if isinstance(item, Call) and item.name == "range" else [item])
        if not out:
            raise expected(value.pos, "an empty list", "at least one value")
        return out
    if isinstance(value, Call) and value.name == "range":
        nums = [a.value for a in value.args]
        if len(nums) not in (2, 3) or any(a.key for a in value.args):
            raise expected(
                value.pos, render(value), "range(start, stop) or range(start, stop, step)"
            )
        for n in nums:
            if not isinstance(n, Number):
                raise expected(n.pos, render(n), "a number in range()")
        step = nums[2] if len(nums) == 3 else None
        return _range(nums[0], nums[1], step, value.pos)  # type: ignore[arg-type]
    return [value]


def from_document(doc: Document) -> Sweep:
    blocks = [b for b in doc.blocks if b.kind == "sweep"]
    if len(blocks) > 1:
        raise expected(blocks[1].pos, "a second 'sweep' block", "one sweep block per experiment")
    sweep = Sweep([])
    seen: dict[str, Pos] = {}
    for b in blocks:
        for s in b.settings():
            if s.key in seen:
                raise expected(
                    s.pos, f"'{s.key}' a second time", f"each key once (first at {seen[s.key]})"
                )
            seen[s.key] = s.pos
            if s.key in ("replications", "seed"):
                v = s.value
                lo = 1 if s.key == "replications" else 0
                # A seed the result stores (model.SEED_MAX), a u32 replication number.
                hi = SEED_MAX if s.key == "seed" else (1 << 32) - 1
                if (
                    not isinstance(v, Number)
                    or not isinstance(v.value, int)
                    or not lo <= v.value <= hi
                ):
                    raise expected(
                        v.pos, render(v), f"a whole number >= {lo} and <= {hi} for {s.key}"
                    )
                setattr(sweep, s.key, v.value)
            elif _is_assumption(s.value):
                # An assumption runs at its default (--set or --envelope move it).
                a = assumption(s.key, s.value)  # type: ignore[arg-type]
                sweep.params.append(Param(s.key, [a.default], s.pos))
            else:
                sweep.params.append(Param(s.key, expand(s.value), s.pos))
    return sweep


def parse_set(arg: str) -> Param:
    """``--set key=value``, ``key=a,b,c`` or ``key=start:stop[:step]``."""
    if "=" not in arg:
        raise ExperimentError(None, f"--set {arg!r}: expected KEY=VALUE")
    key, text = arg.split("=", 1)
    key = key.strip()
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*", key):
        raise ExperimentError(None, f"--set {arg!r}: found key {key!r}, expected a parameter name")
    pos = Pos("--set", 1, len(key) + 2)
    m = _RANGE.match(text)
    if m:
        start = Number(number_value(m.group(1)), m.group(1), pos)
        stop = Number(number_value(m.group(5)), m.group(5), pos)
        step_text = m.group(10)
        step = Number(number_value(step_text), step_text, pos) if step_text else None
        return Param(key, _range(start, stop, step, pos), pos)
    # Parse "a,b,c" as the list "[a,b,c]", keeping columns true to the argument.
    value = parse_value(" " * len(key) + "[" + text + "]", "--set")
    return Param(key, expand(value), pos)


def merge(file: Sweep, sets: list[Param]) -> Sweep:
    """--set replaces a file parameter of the same key, or adds one after them."""
    params = list(file.params)
    for p in sets:
        for i, q in enumerate(params):
            if q.key == p.key:
                params[i] = p
                break
        else:
            params.append(p)
    return Sweep(params, file.replications, file.seed)


# --- applying one point to the document -------------------------------------------------------


def _walk_values(v: Value, fn) -> Value:
    v = fn(v)
    if isinstance(v, Call):
        v.args = [Arg(a.key, _walk_values(a.value, fn), a.pos) for a in v.args]
    elif isinstance(v, List):
        v.items = [_walk_values(x, fn) for x in v.items]
    return v


def _all_blocks(blocks: list[Block]):
    for b in blocks:
        yield b
        yield from _all_blocks(b.blocks())


def variables(doc: Document) -> dict[str, Pos]:
    """Every ``$name`` the file uses, with its first position."""
    found: dict[str, Pos] = {}

    def visit(v: Value) -> None:
        if isinstance(v, Var):
            found.setdefault(v.name, v.pos)
        elif isinstance(v, Call):
            for a in v.args:
                visit(a.value)
        elif isinstance(v, List):
            for x in v.items:
                visit(x)

    for b in _all_blocks(doc.blocks):
        for s in b.settings():
            visit(s.value)
    return found


def _set_in_block(block: Block, key: str, arg: str | None, value: Value, pos: Pos) -> None:
    for s in block.settings():
        if s.key == key:
            if arg is None:
                s.value = value
                return
            if isinstance(s.value, Name):
                s.value = Call(s.value.text, [], s.value.pos)
            if not isinstance(s.value, Call):
                raise expected(s.value.pos, render(s.value), f"a call with an argument '{arg}'")
            for a in s.value.args:
                if a.key == arg:
                    a.value = value
                    return
            s.value.args.append(Arg(arg, value, pos))
            return
    if arg is not None and key == "protocol":
        # A test without a protocol setting is tcp: give it one to hold the argument.
        block.body.append(Setting(key, Call("tcp", [Arg(arg, value, pos)], pos), pos))
        return
    if arg is not None:
        raise ExperimentError(
            pos, f"found a path to '{key}.{arg}', but the block has no '{key}' setting"
        )
    block.body.append(Setting(key, value, pos))


def _apply_path(doc: Document, key: str, value: Value, pos: Pos) -> bool:
    parts = key.split(".")
    if parts[0] == "testbed" and len(parts) >= 2:
        tbs = [b for b in doc.blocks if b.kind == "testbed"]
        if not tbs:
            tbs = [Block("testbed", None, pos)]
            doc.blocks.append(tbs[0])
        tb = tbs[0]
        rest = parts[1:]
        if rest[0] in ("switch", "defaults") and len(rest) == 2:
            # The testbed-wide block (`switch SITE { }` blocks are a site's own).
            sub = [b for b in tb.blocks() if b.kind == rest[0] and b.name is None]
            if not sub:
                sub = [Block(rest[0], None, pos)]
                tb.body.append(sub[0])
            _set_in_block(sub[0], rest[1], None, value, pos)
            return True
        if rest[0] == "host" and len(rest) >= 3:
            name = ".".join(rest[1:-1])
            sub = [b for b in tb.blocks() if b.kind == "host" and b.name == name]
            if not sub:
                sub = [Block("host", name, pos, [], pos)]
                tb.body.append(sub[0])
            _set_in_block(sub[0], rest[-1], None, value, pos)
            return True
        if len(rest) == 1:
            _set_in_block(tb, rest[0], None, value, pos)
            return True
        return False
    tests = [b for b in _all_blocks(doc.blocks) if b.kind == "test" and b.name]
    # The longest test name that prefixes the key: test names may hold dots.
    for t in sorted(tests, key=lambda b: -len(b.name or "")):
        if key.startswith(f"{t.name}."):
            rest = key[len(t.name) + 1 :].split(".")  # type: ignore[arg-type]
            if len(rest) in (1, 2) and all(rest):
                _set_in_block(t, rest[0], rest[1] if len(rest) == 2 else None, value, pos)
                return True
    return False


def _clone(node):
    """A copy of a block or value whose containers (the lists and nodes ``apply`` sets
    or appends to) are new and whose leaves (numbers, names, positions: never changed)
    are shared: a point's document at a small part of deepcopy's cost."""
    if isinstance(node, Block):
        return dataclasses.replace(node, body=[_clone(x) for x in node.body])
    if isinstance(node, Setting):
        return dataclasses.replace(node, value=_clone(node.value))
    if isinstance(node, Call):
        args = [dataclasses.replace(a, value=_clone(a.value)) for a in node.args]
        return dataclasses.replace(node, args=args)
    if isinstance(node, List):
        return dataclasses.replace(node, items=[_clone(x) for x in node.items])
    return node


def apply(doc: Document, point: dict[str, Value], params: list[Param]) -> Document:
    """A copy of ``doc`` with the point's values in place of its variables and paths."""
    # The sweep blocks are neither substituted nor set: shared, not copied (a sweep of
    # thousands of points would otherwise copy its own lists once per point).
    out = copy.copy(doc)
    out.blocks = [b if b.kind == "sweep" else _clone(b) for b in doc.blocks]
    used = variables(doc)
    where = {p.key: p.pos for p in params}
    for name, pos in used.items():
        if name not in point:
            raise expected(
                pos,
                f"${name}",
                f"a value for it from a sweep {{ {name} = ...; }} or --set {name}=...",
            )

    def subst(v: Value) -> Value:
        if isinstance(v, Var):
            return _clone(point[v.name])
        return v

    for b in _all_blocks(out.blocks):
        for s in b.settings():
            if b.kind != "sweep":
                s.value = _walk_values(s.value, subst)
    for key, value in point.items():
        if key in used:
            continue
        if not _apply_path(out, key, _clone(value), value.pos):
            tests = sorted(b.name for b in _all_blocks(doc.blocks) if b.kind == "test" and b.name)
            names = ", ".join(f"${v}" for v in sorted(used)) or "none"
            raise ExperimentError(
                where.get(key),
                f"found parameter '{key}', expected a variable of the file ({names}) or a path "
                f"TEST.key[.arg] (tests: {', '.join(tests) or 'none'}), testbed.key, "
                "testbed.switch.key, testbed.defaults.key or testbed.host.NAME.key",
            )
    return out


def column_value(v: Value) -> int | float | str:
    """A parameter value as a result column holds it."""
    if isinstance(v, Number):
        return v.value
    if isinstance(v, Name):
        return v.text
    if isinstance(v, HostPort):
        return str(v)
    return render(v)
