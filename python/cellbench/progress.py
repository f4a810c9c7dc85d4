"""Progress on stderr (tqdm), one look for every long step: a plan's check
(``experiment.plan``) and an engine's runs (``engines.loop``). On a terminal a bar
redrawn in place; in a pipe or a log, a line now and then."""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from collections.abc import Iterator

#: The command being run, which the progress bar names in place of "cellbench run"
#: (``cli.main`` sets it: ``cellbench reproduce lan-buffers``).
COMMAND = "cellbench run"
#: Without a terminal (a pipe, a log), the bar is a line at most this often (seconds).
LINE_INTERVAL_S = 5.0


class _Lines:
    """tqdm's output as whole lines, for a pipe or a log file: each refresh a line of
    its own (on a terminal tqdm redraws one line in place with carriage returns)."""

    def __init__(self, stream):
        self.stream = stream
        self.last = ""

    def write(self, text: str) -> None:
        line = text.replace("\r", "").strip()
        if not line or line == self.last:
            return
        # The bar's close repeats its last state with a later clock: one final line.
        m = _COUNT.search(line)
        if m and m.group(1) == m.group(2) and _said(line) == _said(self.last):
            return
        self.stream.write(line + "\n")
        self.last = line

    def flush(self) -> None:
        self.stream.flush()


#: A bar's "n/total", and its clock and rate ("[00:12<00:03, 2.51run/s"), which a
#: repeated state changes, and so the width of its bar ("|####|": tqdm fits the bar to
#: what the line's other parts leave).
_COUNT = re.compile(r"\b(\d+)/(\d+)\b")
_CLOCK = re.compile(r"\[[^,\]]*(, [^,\]]*/s)?")
_BAR = re.compile(r"\|[^|]*\|")


def _said(line: str) -> str:
    """A progress line without its clock, rate and bar: what it says of the work."""
    return _BAR.sub("|", _CLOCK.sub("[", line))


#: On a terminal, a bar appears once its work has taken this long (s): a quick step
#: stays quiet, a slow one is never silent.
TTY_DELAY_S = 1.0


def bar(total: int, desc: str, unit: str, progress: bool, initial: int = 0):
    """A progress bar on stderr (tqdm), shown only when ``progress``: on a terminal
    redrawn in place, once TTY_DELAY_S have passed; elsewhere as a line every
    LINE_INTERVAL_S seconds, the first once LINE_INTERVAL_S have passed. Not shown, a
    stand-in that imports no tqdm (``Quiet``: ``cellbench ttcp`` stays light)."""
    if not progress:
        return Quiet()
    from tqdm import tqdm

    tty = sys.stderr.isatty()
    return tqdm(
        total=total,
        initial=initial,
        unit=unit,
        desc=desc,
        disable=not progress,
        file=sys.stderr if tty else _Lines(sys.stderr),
        **(
            {"delay": TTY_DELAY_S}
            if tty
            else {
                "mininterval": LINE_INTERVAL_S,
                "delay": LINE_INTERVAL_S,
                "miniters": 1,
                "ascii": True,
                "ncols": 100,
            }
        ),  # fmt: skip
    )


class Quiet:
    """A bar not shown, as tqdm's disabled one behaves: counts nothing, draws nothing,
    and ``write`` prints its line."""

    disable = True

    def __enter__(self) -> Quiet:
        return self

    def __exit__(self, *exc) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass

    def refresh(self) -> None:
        pass

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass

    @staticmethod
    def write(s: str, file=None, end: str = "\n") -> None:
        fp = file if file is not None else sys.stdout
        fp.write(s + end)


def progress_bar(plan, done, desc: str, progress: bool):
    """The runs' progress bar, every engine alike: the plan's runs, those already
    stored counted as done."""
    desc = desc.replace("cellbench run", COMMAND, 1)  # "(emu)", "(real)" stay
    return bar(plan.runs_total, desc, "run", progress, initial=len(done))


@contextlib.contextmanager
def heartbeat(progress_bar) -> Iterator[None]:
    """Redraw ``progress_bar`` while its work runs even when no step ends: one long run
    (0/1) shows its elapsed time grow instead of standing still; tqdm redraws only
    on an update. Every TTY_DELAY_S on a terminal, LINE_INTERVAL_S elsewhere."""
    if progress_bar.disable:
        yield
        return
    every = max(TTY_DELAY_S if sys.stderr.isatty() else LINE_INTERVAL_S, 0.05)
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every):
            if shown(progress_bar):
                progress_bar.refresh()

    t = threading.Thread(target=beat, name="cellbench-progress", daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


def shown(progress_bar) -> bool:
    """Whether the bar is past its delay (a short run's never is: it stays quiet)."""
    return not progress_bar.disable and (
        progress_bar._time() - progress_bar.start_t >= progress_bar.delay
    )
