"""How well `wattzip plan` predicts a study: its estimate against the study's wall time.

    .venv/bin/python benchmarks/plan_accuracy.py [--configfile config.yaml OVERLAY ...]
        [--out DIR]

In a fresh copy of the workflow (its own inputs, pilot, journals and tables): runs the
plan (its pilot included, timed apart), then the whole study with `snakemake --cores
all`, and prints the estimate beside the wall time, their ratio, and the measured time
(the sum of every run's elapsed time) beside the plan's measured part. The default
overlay is the emulated-disk study of issue 23 (benchmarks/emulated-disk.yaml).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from arguments import file_under  # noqa: E402
from designs import REPO, copy_workflow  # noqa: E402

from wattzip.model.study import Study  # noqa: E402

BIN = Path(sys.executable).parent


def run(argv: list[str], cwd: Path) -> float:
    """Seconds the command took; its failure stops the benchmark with its stderr. The
    copy's own package is imported (PYTHONPATH), not the checkout's, which may change."""
    started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr[-3000:]}")
    return time.monotonic() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configfile", nargs="+", type=file_under(REPO),
                   default=["config.yaml", "benchmarks/emulated-disk.yaml"])
    p.add_argument("--out", default="build/bench-plan")
    a = p.parse_args()
    root = Path(a.out).resolve()
    shutil.rmtree(root, ignore_errors=True)
    copy_workflow(root)
    configs = [str(REPO / c) for c in a.configfile]
    study = Study.from_files(configs)
    testbed = study.first_testbed
    results = root / study.root() / testbed  # results/<study>/<testbed>, as the rules write it
    estimate_path = results / "plan" / "estimate.json"
    snakemake = [str(BIN / "snakemake"), "--cores", "all", "--configfile", *configs]
    pilot_s = run([*snakemake, "--", str(estimate_path.relative_to(root))], root)
    estimate = json.loads(estimate_path.read_text())
    wall_s = run(snakemake, root)
    with open(results / "runs.csv", newline="") as f:
        measured_s = sum(float(r["elapsed_s"] or 0) for r in csv.DictReader(f))
    design = estimate["designs"][estimate["design"]]
    print(f"study: {' '.join(a.configfile)} (testbed {testbed})")
    print(f"plan: {estimate['text']}")
    print(f"pre-flight and pilot {pilot_s:.0f} s (before the study, not in its wall time)")
    print(f"measured runs: plan {design['measured_min_s']:.0f} s, study {measured_s:.0f} s, "
          f"study / plan {measured_s / design['measured_min_s']:.2f}")
    print(f"wall: plan {design['wall_min_s']:.0f}-{design['wall_max_s']:.0f} s, study "
          f"{wall_s:.0f} s, study / plan {wall_s / design['wall_min_s']:.2f}"
          f" (asked: within 1.5)")


if __name__ == "__main__":
    main()
