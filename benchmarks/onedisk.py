"""One budget against the kernel's throttle: a copy on an emulated disk, side by side in
one run (needs root).

    .venv/bin/python benchmarks/onedisk.py [--rate 30MB/s] [--size 64MiB] [--pairs 3]

The same ext2 image, the same 64 MiB file on it copied to another (dd, 128 KiB buffer),
caches dropped before each copy, the variants alternating A B C A B C:

  A: the image behind wattzip.machine.onedisk, its reads and writes through one budget at the
     rate, flushed by unmounting it (the paper's flush, config/disks.yaml's);
  B: the image's loop device capped by a block-I/O cgroup at the rate (reads and writes
     apart), the copy and the unmount inside the cgroup: what the study did before;
  C: as B, flushed by dd's own fsync instead of the unmount.

Prints each copy's wall time against one disk's ideal, 2 x size / rate, and the bytes the
loop device moved as the kernel counts them (/sys/block/loopN/stat).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from wattzip import machine, units
from wattzip.machine import media, throttle
from wattzip.workload import inputs


def moved(loop: str) -> int:
    fields = Path(f"/sys/block/{os.path.basename(loop)}/stat").read_text().split()
    return (int(fields[2]) + int(fields[6])) * 512


def copy_s(medium: media.Medium, size: int, cgroup: throttle.Throttle | None,
           flush: str) -> tuple[float, int]:
    """(seconds, bytes moved) of one cold copy of a.bin to b.bin on the medium, flushed."""
    Path(medium.path, "b.bin").unlink(missing_ok=True)
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")
    before = moved(medium.source)
    argv = ["dd", f"if={medium.path}/a.bin", f"of={medium.path}/b.bin", "bs=128K",
            "status=none", *(["conv=fsync"] if flush == "fsync" else [])]
    started = time.monotonic()
    with cgroup.entered() if cgroup else contextlib.nullcontext():
        subprocess.run(argv, check=True)
        if flush == "unmount":
            medium.unmount()
    seconds = time.monotonic() - started
    medium.mount()
    return seconds, moved(medium.source) - before


VARIANTS = {  # name: (one budget, flush)
    "A one budget, unmount": (True, "unmount"),
    "B cgroup, unmount": (False, "unmount"),
    "C cgroup, fsync": (False, "fsync"),
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rate", default="30MB/s")
    p.add_argument("--size", default="64MiB")
    p.add_argument("--pairs", type=int, default=3)
    a = p.parse_args()
    rate, size = throttle.parse_bandwidth(a.rate), units.parse_size(a.size)
    results: dict[str, list] = {name: [] for name in VARIANTS}
    # It mounts, throttles and drops caches: it holds the machine like any study.
    with machine.session("benchmark onedisk"), tempfile.TemporaryDirectory(
            dir="/var/tmp") as tmp:
        for _ in range(a.pairs):
            for name, (one, flush) in VARIANTS.items():
                medium = media.Medium(name="bench", kind="image", path=f"{tmp}/ext2",
                                      size=f"{3 * size // 2**20 + 64}MiB",
                                      inputs="on-medium", flush="unmount")
                medium.share_budget(rate if one else None)
                medium.attach()
                try:
                    with medium.unthrottled():
                        inputs.generate("random", size, Path(medium.path, "a.bin"),
                                        progress=False)
                    with throttle.throttled({"disk": medium.source},
                                            None if one else rate) as cgroup:
                        results[name].append(copy_s(medium, size, cgroup, flush))
                finally:
                    medium.detach()
    ideal = 2 * size / rate
    print(f"copy of {a.size} on an ext2 image at {a.rate}, {a.pairs} rounds, caches dropped; "
          f"one disk's ideal 2 x size / rate = {ideal:.2f} s")
    medians = {}
    for name, runs in results.items():
        times = [t for t, _ in runs]
        medians[name] = statistics.median(times)
        print(f"  {name:<22} median {medians[name]:.2f} s (min {min(times):.2f}, max "
              f"{max(times):.2f}); loop moved {statistics.median(m for _, m in runs) / 2**20:.0f}"
              f" MiB; median / ideal {medians[name] / ideal:.2f}")
    first = next(iter(medians.values()))
    print("  " + ", ".join(f"A / {name[0]} {first / m:.2f}" for name, m in medians.items()
                           if name[0] != "A"))


if __name__ == "__main__":
    main()
