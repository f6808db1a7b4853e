"""How long a study's rehearsal takes: the whole SIMULATED report before any measurement.

    .venv/bin/python benchmarks/rehearsal.py [OVERLAY ...] [--cores 2]

For each overlay (default: config/paper.yaml, the paper-scale study), copies the
workflow into a fresh folder, runs `wattzip rehearse --configfile config.yaml
OVERLAY` there as a user would, and prints its wall time, the jobs it ran and the
pages of its PDF. The target for config/paper.yaml is under 2 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from arguments import file_under

REPO = Path(__file__).resolve().parent.parent
WORKFLOW = ("Snakefile", "config.yaml", "config", "rules", "scripts", "profiles", "envs",
            "paper")


def rehearse(overlay: str, cores: str) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in WORKFLOW:
            src = REPO / name
            if src.is_dir():
                shutil.copytree(src, root / name,
                                ignore=shutil.ignore_patterns("generated"))
            else:
                shutil.copy(src, root / name)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "wattzip", "rehearse", "--cores", cores,
                               "--configfile", "config.yaml", overlay], cwd=root,
                              capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        if proc.returncode:
            sys.exit(f"{overlay}: the rehearsal failed\n{proc.stderr[-3000:]}")
        jobs = proc.stderr.count("Finished jobid")
        study = yaml.safe_load((root / overlay).read_text()).get("study", {}).get(
            "name", "default")
        info = subprocess.run(["pdfinfo", str(root / "rehearsal" / study / "paper.pdf")],
                              capture_output=True, text=True, check=True).stdout
        pages = int(next(line.split()[-1] for line in info.splitlines()
                         if line.startswith("Pages:")))
        return wall, jobs, pages


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("overlays", nargs="*", default=["config/paper.yaml"], type=file_under(REPO))
    p.add_argument("--cores", default="2")
    a = p.parse_args()
    print(f"{'overlay':<28} {'wall':>8} {'jobs':>5} {'pages':>6}")
    for overlay in a.overlays:
        wall, jobs, pages = rehearse(overlay, a.cores)
        print(f"{overlay:<28} {wall:7.1f}s {jobs:>5} {pages:>6}", flush=True)


if __name__ == "__main__":
    main()
