"""The experiment language fuzzed as the decoders are: any text, token soup or mutation of
a real file either makes a plan or is one ExperimentError; never another exception, a
traceback or a hang (every example has a deadline)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cellbench.experiment import lang
from cellbench.experiment.plan import make_plan

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.netspec"))
SEEDS = [p.read_text() for p in EXAMPLES]

WORDS = [
    "cluster", "parallel", "serial", "test", "testbed", "sweep", "host", "switch", "trunk",
    "defaults", "type", "protocol", "own", "peer", "full", "burst", "burstq", "sink", "tcp",
    "udp", "blocksize", "nbytes", "duration", "period", "window", "sndbuf", "rcvbuf",
    "pacing", "nodelay", "uniform", "exponential", "range", "replications", "seed", "A", "B",
    "lan-buffers", "wan-window", "mtu", "encap", "phy", "oc3c", "off", "$w", "$x",
]  # fmt: skip
PUNCT = list("{}()[];=,:") + ['"x"', "#c\n", "\n"]
NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=False).map(repr),
    st.sampled_from(["1e999", "-1e999", "0", "0.5", "8K", "1G", "1e18", "1.5M", ".5", "1e-9"]),
)
TOKENS = st.one_of(st.sampled_from(WORDS), st.sampled_from(PUNCT), NUMBERS)

SETTINGS = settings(
    max_examples=300,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow],
)


def plan_or_error(text: str, as_text: bool = True) -> None:
    try:
        # A one-line text without a brace is taken for a file name: make it text.
        make_plan(text + "\n" if as_text else text, file="fuzz.netspec")
    except lang.ExperimentError as e:
        message = str(e)
        assert message and "\n" not in message, message


@SETTINGS
@given(st.text(max_size=400))
def test_any_text(text: str) -> None:
    plan_or_error(text)
    plan_or_error(text, as_text=False)  # a file name, maybe: unreadable is an error too


@SETTINGS
@given(st.lists(TOKENS, max_size=120))
def test_token_soup(tokens: list[str]) -> None:
    plan_or_error(" ".join(tokens))


@SETTINGS
@given(
    st.sampled_from(SEEDS),
    st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 12), st.one_of(TOKENS, st.just(""))),
        min_size=1,
        max_size=4,
    ),
)
def test_mutated_examples(seed: str, edits: list[tuple[float, int, str]]) -> None:
    """A real file with stretches cut out and tokens put in: deep in the checker."""
    text = seed
    for where, cut, put in edits:
        i = int(where * len(text))
        text = text[:i] + f" {put} " + text[i + cut :]
    plan_or_error(text)


@SETTINGS
@given(st.integers(1, 400), st.sampled_from(["parallel {", "serial {", "[", "f("]))
def test_any_nesting(depth: int, opener: str) -> None:
    closer = {"parallel {": "}", "serial {": "}", "[": "]", "f(": ")"}[opener]
    inner = opener * depth + closer * depth
    if opener.endswith("{"):
        plan_or_error("cluster {" + inner + "}")
    else:
        plan_or_error("sweep { x = " + inner + "; }")
