"""The errors every layer shares: each is printed as one line (``cellbench: error:
...``, exit status 2), never a traceback.

- ``UsageError``: a bad value on the command line (an option, a combination).
- ``ExperimentError`` (``experiment.lang``): a bad experiment file, with its position.
- ``EngineError``: an engine failing while it runs (an agent, a daemon, the emulator),
  naming the host and connection; the emulator's ``EmuError`` and the real engine's
  ``RealError`` are kinds of it.

The engines (``cellbench.engines.emu``, ``cellbench.engines.real``) raise these and never import the
command line.
"""

from __future__ import annotations

from cellbench.experiment.lang import ExperimentError


class UsageError(Exception):
    """A bad value from the user: printed as one line, exit status 2."""


class EngineError(ExperimentError):
    """An engine failing as it runs: one line, naming the host and connection."""

    def __init__(self, message: str):
        super().__init__(None, message)


class Interrupted(KeyboardInterrupt):
    """A sweep stopped by a signal: ``signum`` is SIGINT (Ctrl-C) or SIGTERM; the
    command's exit status is 128 + ``signum``, as a shell reports a signal's."""

    def __init__(self, signum: int):
        import signal

        super().__init__(signal.Signals(signum).name)
        self.signum = signum
