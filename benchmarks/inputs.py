"""Benchmark: input generation throughput and memory next to a plain dd write.

For each file type, in one run: `wattzip gen` writing SIZE (flushed) with its
peak resident memory, then `dd if=/dev/zero ... conv=fsync` of the same size
to the same directory, so the disk's own write speed stands beside it.

    .venv/bin/python benchmarks/inputs.py [--size 512MiB] [--dir DIR] [TYPE ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from wattzip.units import format_size, parse_size


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of a child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed with exit {proc.returncode}")
    return time.perf_counter() - t0, usage.ru_maxrss / 1024


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("types", nargs="*", default=["zero", "random", "text", "binary", "mix-50"])
    p.add_argument("--size", default="512MiB")
    p.add_argument("--dir", default=".")
    a = p.parse_args()
    size = parse_size(a.size)
    work = tempfile.mkdtemp(prefix="wattzip-bench-", dir=a.dir)
    mib = size / 2**20
    print(f"{format_size(size)} per file in {os.path.abspath(a.dir)}")
    print(f"{'type':<8} {'gen MiB/s':>10} {'dd MiB/s':>10} {'gen/dd':>7} {'gen peak RSS':>13}")
    for file_type in a.types:
        out = os.path.join(work, f"{file_type}.bin")
        gen_s, rss = timed([sys.executable, "-m", "wattzip", "gen", file_type, "--size",
                            str(size), "--out", out, "--quiet"])
        os.unlink(out)
        os.unlink(out + ".json")
        dd_s, _ = timed(["dd", "if=/dev/zero", f"of={out}", "bs=1M",
                         f"count={size // 2**20}", "conv=fsync"])
        os.unlink(out)
        print(f"{file_type:<8} {mib / gen_s:>10.0f} {mib / dd_s:>10.0f} {dd_s / gen_s:>7.2f} "
              f"{rss:>10.1f} MiB")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
