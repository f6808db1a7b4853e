"""Progress on stderr: a bar with the ETA on a terminal, one plain line per run otherwise
(a log file or a CI job gets lines it can read, not carriage returns)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

BAR_WIDTH = 30


def clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


class BenchProgress:
    """How far a benchmark is: runs done of runs planned, and the time they took."""

    def __init__(self, stream: TextIO | None = None, tty: bool | None = None,
                 quiet: bool = False):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.quiet = quiet
        self._label, self._planned, self._done, self._t0 = "", 0, 0, time.monotonic()
        self._drawn = False

    def start(self, label: str, planned: int) -> None:
        self._label, self._planned, self._done = label, planned, 0
        self._t0 = time.monotonic()
        if not self.tty and not self.quiet:
            self.line(f"{label}: {planned} run(s)")

    def replan(self, planned: int) -> None:
        self._planned = max(planned, self._done)

    def run_done(self, text: str) -> None:
        """One more run measured; `text` is what the plain line says of it."""
        self._done += 1
        if self.quiet:
            return
        if self.tty:
            self._draw()
        else:
            self.line(f"  run {self._done}/{self._planned}: {text}")

    def eta_s(self) -> float:
        if not self._done:
            return float("nan")
        per_run = (time.monotonic() - self._t0) / self._done
        return per_run * (self._planned - self._done)

    def _draw(self) -> None:
        filled = BAR_WIDTH * self._done // max(self._planned, 1)
        eta = self.eta_s()
        self.stream.write(f"\r\x1b[K{self._label[:40]:<40} {'█' * filled}"
                          f"{'░' * (BAR_WIDTH - filled)} {self._done}/{self._planned} "
                          f"ETA {clock(eta) if eta == eta else '--:--'}")
        self.stream.flush()
        self._drawn = True

    def clear(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def line(self, text: str) -> None:
        """A message of its own line (the bar, if drawn, is cleared first): notes and
        warnings, shown even when the progress itself is not."""
        self.clear()
        print(text, file=self.stream, flush=True)
