"""Where ``cellbench reproduce --engine emu`` (cellbench.reproduce.emu) takes the
emulator's plan runner from; both live in ``cellbench.engines.emu`` now."""

from __future__ import annotations

from cellbench.engines.emu import check_platform, run_plan

__all__ = ["check_platform", "run_plan"]
