"""What the tests read of the real machine: its loop devices, its mounts, and the I/O
schedulers its disk offers."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from wattzip.machine import factors


def other_schedulers(disk: str, count: int) -> list[str]:
    """Schedulers the disk offers besides its own (which ones depends on the kernel: bfq
    and kyber are modules, loaded or not, or absent)."""
    others = [s for s in factors.offered_io_schedulers(disk)
              if s != factors.current_io_scheduler(disk)]
    if len(others) < count:
        pytest.skip(f"{disk} offers {count} scheduler(s) besides its own only with "
                    f"modules this kernel has not loaded: {others}")
    return others[:count]


def loops_of(image: Path) -> list[str]:
    return subprocess.run(["losetup", "--associated", str(image), "--noheadings", "--output",
                           "NAME"], capture_output=True, text=True, check=False).stdout.split()


def mounted(path: Path) -> bool:
    return any(line.split()[1] == str(path) for line in open("/proc/self/mounts"))
