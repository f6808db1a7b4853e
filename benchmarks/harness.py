"""Benchmark: what the harness adds to a measured run, and what its sampler costs.

Prints, measured side by side in one run (A B A B ...):
  1. the elapsed time the harness reports for a real compress-write against the
     same command run bare (Popen, wait, fsync), caches dropped before each;
  2. the CPU time the sampler thread uses per second of sampling at 10 Hz.

    .venv/bin/python benchmarks/harness.py [--input FILE] [--pairs 7] [--codec gz-6]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from arguments import existing_file

from wattzip import meters
from wattzip.measure import runner
from wattzip.workload import codec_registry, inputs


def bare_run(argv: list[str], src: str, dst: str) -> float:
    """The command alone: the same redirections and flush, no meter, no sampler."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=fin, stdout=fout)
        os.wait4(proc.pid, 0)
        proc.returncode = 0
        fout.flush()
        os.fsync(fout.fileno())
        fd = os.open(os.path.dirname(dst), os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        return time.perf_counter() - t0


def sampler_cpu(meter: meters.Meter, seconds: float) -> float:
    """CPU seconds per second of sampling, of this whole (otherwise idle) process."""
    c0, t0 = time.process_time(), time.monotonic()
    meter.start()
    time.sleep(seconds)
    meter.stop()
    return (time.process_time() - c0) / (time.monotonic() - t0)


def fake_powercap(root: Path) -> None:
    for i, name in enumerate(("package-0", "dram")):
        zone = root / f"intel-rapl:{i}"
        zone.mkdir(parents=True)
        (zone / "name").write_text(name + "\n")
        (zone / "energy_uj").write_text("1000\n")
        (zone / "max_energy_range_uj").write_text("262143328850\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--input", type=existing_file,
                   help="input file (default: 64 MiB of generated text)")
    p.add_argument("--pairs", type=int, default=7)
    p.add_argument("--codec", default="gz-6")
    p.add_argument("--sampling-seconds", type=float, default=10.0)
    a = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="wattzip-bench-", dir=os.getcwd()))
    src = str(a.input or work / "text.bin")
    if not a.input:
        inputs.generate("text", 64 << 20, src, progress=False)
    codec = codec_registry.get(a.codec)
    argv = codec.compress_argv(str(work / "out"), 1)
    opts = meters.MeterOptions(model_idle_power_w=40, model_max_power_w=120, interval_s=0.1)
    meter = meters.ModelMeter(opts)
    operation = runner.Operation("compress-write", [argv], [src], [str(work / "h.out")],
                                 [str(work / "h.out")])
    harness, bare = [], []
    for _ in range(a.pairs):
        runner.drop_caches([src, str(work / "h.out")])
        harness.append(runner.measure(operation, meter, 40.0)["elapsed_s"])
        runner.drop_caches([src, str(work / "b.out")])
        bare.append(bare_run(argv, src, str(work / "b.out")))
    ratios = [h / b for h, b in zip(harness, bare, strict=True)]
    print(f"compress-write {a.codec} on {os.path.getsize(src) / 2**20:.0f} MiB, {a.pairs} pairs "
          "(A = harness-reported elapsed, B = bare command), caches dropped before each")
    print(f"  harness elapsed median {statistics.median(harness):.4f} s "
          f"(min {min(harness):.4f}, max {max(harness):.4f})")
    print(f"  bare    elapsed median {statistics.median(bare):.4f} s "
          f"(min {min(bare):.4f}, max {max(bare):.4f})")
    print(f"  ratio A/B median {statistics.median(ratios):.4f} "
          f"(min {min(ratios):.4f}, max {max(ratios):.4f}); "
          f"overhead {100 * (statistics.median(ratios) - 1):+.2f}% (budget: under 2%)")

    root = work / "powercap"
    fake_powercap(root)
    for name, m in (("model", meters.ModelMeter(opts)),
                    ("powercap (fake sysfs)", meters.PowercapMeter(
                        meters.MeterOptions(powercap_root=str(root), interval_s=0.1)))):
        share = sampler_cpu(m, a.sampling_seconds)
        print(f"sampler {name} at 10 Hz: {100 * share:.3f}% of one core over "
              f"{a.sampling_seconds:g} s (budget: under 0.5%)")
    idle = sampler_cpu(_NoMeter(), a.sampling_seconds)
    print(f"same process without a sampler: {100 * idle:.3f}% of one core (the floor)")
    shutil.rmtree(work)


class _NoMeter(meters.Meter):
    def __init__(self):
        pass

    def start(self):
        pass

    def stop(self):
        return None


if __name__ == "__main__":
    main()
