"""What `wattzip bench` adds to a run, against hyperfine on the same commands.

    .venv/bin/python benchmarks/bench_overhead.py [--runs 10] [--rounds 3] [--size 16MiB]

Holds the machine's lock, then for each command runs hyperfine (-N, no shell) and
`wattzip bench` (--shell none, the estimated model meter, in this process) in rounds,
the order of the two tools reversed every round (ABBA, so that a neighbour's changing
load falls on both), and prints side by side: the median elapsed time per run each
reports (the measured region: what a user compares), and each tool's wall time per
run (its start-up and its work between runs: meter start and stop, bookkeeping). The
target is a reported elapsed time within 2 % of hyperfine's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wattzip import cli, machine, units
from wattzip.workload import inputs  # noqa: E402


def commands(text: Path) -> list[str]:
    return ["sleep 0.05", "sleep 0.2", f"gzip -1 -c {text}", f"gzip -6 -c {text}",
            f"bzip2 -9 -c {text}"]


def hyperfine(command: str, runs: int, out: Path) -> tuple[list[float], float]:
    """(elapsed times reported, wall seconds) of hyperfine -N."""
    t0 = time.perf_counter()
    subprocess.run(["hyperfine", "-N", "--style", "none", "--runs", str(runs),
                    "--export-json", str(out), command], check=True, capture_output=True)
    wall = time.perf_counter() - t0
    return json.loads(out.read_text())["results"][0]["times"], wall


def wattzip_bench(command: str, runs: int, out: Path) -> tuple[list[float], float]:
    """(elapsed times reported, wall seconds) of wattzip bench -N, in-process (this
    script holds the lock it would wait for)."""
    t0 = time.perf_counter()
    with open(os.devnull, "w") as null:
        stdout, sys.stdout = sys.stdout, null
        try:
            code = cli.main(["bench", "-N", "--runs", str(runs), "--meter", "model",
                             "--progress", "none", "--export-json", str(out), command])
        finally:
            sys.stdout = stdout
    if code:
        raise SystemExit(f"wattzip bench failed on {command!r}")
    wall = time.perf_counter() - t0
    document = json.loads(out.read_text())
    GAPS.extend(gaps_s(document["runs"][0]))
    return document["results"][0]["times"], wall


GAPS: list[float] = []  # wattzip's seconds between one run's end and the next's start


def gaps_s(runs: list[dict]) -> list[float]:
    """Between consecutive runs: the meter's stop and start, the bookkeeping."""
    stamps = [(dt.datetime.fromisoformat(r["started_at"]), dt.datetime.fromisoformat(
        r["ended_at"])) for r in runs]
    return [(b[0] - a[1]).total_seconds() for a, b in zip(stamps, stamps[1:], strict=False)]


def side_by_side(command: str, runs: int, rounds: int, work: Path) -> tuple:
    """Both tools' times and wall seconds over the rounds, ABBA."""
    tools = {"hyperfine": hyperfine, "wattzip": wattzip_bench}
    times = {name: [] for name in tools}
    wall = dict.fromkeys(tools, 0.0)
    for r in range(rounds):
        for name in (list(tools) if r % 2 == 0 else list(reversed(tools))):
            got, seconds = tools[name](command, runs, work / f"{name}.json")
            times[name] += got
            wall[name] += seconds
    return ((statistics.median(times["hyperfine"]), wall["hyperfine"] / (runs * rounds)),
            (statistics.median(times["wattzip"]), wall["wattzip"] / (runs * rounds)),
            statistics.median(GAPS))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--size", default="16MiB", help="the generated text the codecs read")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        work = Path(tmp)
        text = work / "text.bin"
        inputs.generate("text", units.parse_size(a.size), text, seed=7, progress=False)
        rows = []
        with machine.session("benchmark", config="bench_overhead"):
            for command in commands(text):
                GAPS.clear()
                hf, wz, gap = side_by_side(command, a.runs, a.rounds, work)
                rows.append((command.replace(str(text), "TEXT"), hf, wz, gap))
    print(f"{a.rounds} rounds (ABBA) of {a.runs} runs per tool and command, {a.size} of "
          "generated text as TEXT; elapsed = the median of the runs each tool reports, "
          "wall = the tool's own wall time per run, start-up included\n")
    print("| command | hyperfine elapsed [ms] | wattzip elapsed [ms] | ratio | "
          "hyperfine wall/run [ms] | wattzip wall/run [ms] | ratio | wattzip between "
          "runs [ms] |")
    print("|:---|---:|---:|---:|---:|---:|---:|---:|")
    for command, (hf_mean, hf_wall), (wz_mean, wz_wall), gap in rows:
        print(f"| `{command}` | {hf_mean * 1e3:.1f} | {wz_mean * 1e3:.1f} | "
              f"{wz_mean / hf_mean:.3f} | {hf_wall * 1e3:.1f} | {wz_wall * 1e3:.1f} | "
              f"{wz_wall / hf_wall:.3f} | {gap * 1e3:.1f} |")
    print(f"\nmachine load average while it ran: {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
