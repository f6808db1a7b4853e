"""The paper's repeat rule against the verdict and the moderated design, side by side.

    .venv/bin/python benchmarks/designs.py [--configfile config.yaml ...] [--out DIR]
        [--paper-repeats 5,10] [--looks N,...] [--moderated-looks N,...] (the schema's)
        [--designs paper,verdict,moderated] [--file-size 16MiB]

Runs the same study twice on this machine, one design after the other, each in a
fresh copy of the workflow (its own inputs, journals and tables), up to the
analysis tables; then prints, per design, the measured time (the sum of every run's
elapsed time), the runs, the break-even cells whose T and E verdicts were decided,
those whose break-even kind (T and E) was decided, and the claims' verdicts, with the
ratios of each design to the paper's rule and where their verdicts differ.

Runs and measured time count every run of runs.csv, the plain ones included (the
column plain counts those alone): under the paper's rule one plain baseline job per
setting and file type, under the verdict design a plain arm inside every codec's job
(interleaved ABBA, as many repeats as the codec's), so that design measures plain
I/O once per codec, and its runs are 4 per repeat of a codec's job. The moderated
design is the verdict design's jobs with each arm's variance moderated across the
study's cells (wattzip.analysis.moderated); each copy first runs `wattzip plan` (its pilot is not
measured time) so that its jobs run cheapest first, as a user's would after the plan.
Where two designs both decide a cell, their verdicts are compared cell by cell. A
design run alone (--designs moderated) prints its own line and no ratios.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml
from arguments import file_under

from wattzip.model.study import Study
from wattzip.resources import load_schema

REPO = Path(__file__).resolve().parent.parent
# What a fresh copy of the workflow leaves out: the repository's state and every output.
NOT_COPIED = shutil.ignore_patterns(".git", ".venv", ".snakemake", "results", "rehearsal", "build",
                                    "generated", "tests", "docs", "*.egg-info")


def copy_workflow(root: Path) -> None:
    shutil.copytree(REPO, root, ignore=NOT_COPIED)
    (root / "figures").mkdir(exist_ok=True)


def rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def run_design(root: Path, configfiles: list[str], repeats: dict,
               file_size: str | None) -> dict:
    copy_workflow(root)
    overlay = root / "design.yaml"
    overlay.write_text(yaml.safe_dump({"repeats": repeats,
                                       **({"file_size": file_size} if file_size else {})}))
    configs = [*[str(REPO / c) for c in configfiles], str(overlay)]
    study = Study.from_files(configs)
    tree = f"{study.root()}/{study.first_testbed}"  # results/<study>/<testbed>
    targets = [f"{tree}/{name}" for name in ("runs.csv", "breakeven.csv", "claims.csv")]
    pilot = root.parent / "pilot.json"  # one pilot for every design's copy
    subprocess.run([sys.executable, "-m", "wattzip", "plan", "--quiet", "--cache", str(pilot),
                    "--configfile", *configs], cwd=root, capture_output=True, check=True)
    (root / tree / "plan").mkdir(parents=True, exist_ok=True)
    shutil.copy(pilot, root / tree / "plan" / "pilot.json")
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *targets, "--cores", "all", "--configfile",
         *configs],
        cwd=root, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{root}: the study failed:\n{proc.stderr[-3000:]}")
    runs = rows(root / tree / "runs.csv")
    cells = [c for c in rows(root / tree / "breakeven.csv")
             if c["metric"] in ("T", "E") and c["primary"] == "true"]
    return {"wall_s": wall, "measured_s": sum(float(r["elapsed_s"] or 0) for r in runs),
            "runs": len(runs), "plain": sum(r["codec"] == "plain" for r in runs),
            "cells": len(cells),
            "decided": sum(c["verdict"] != "undecided" for c in cells),
            "saves": sum(c["verdict"] == "saves" for c in cells),
            "costs": sum(c["verdict"] == "costs" for c in cells),
            "negligible": sum(c["verdict"] == "negligible" for c in cells),
            "verdicts": {(c["file_type"], c["codec"], c["metric"]): c["verdict"]
                         for c in cells},
            "kinds": {(c["file_type"], c["codec"], c["metric"]):
                      c["kind"] if c["decided"] == "true" else "undecided" for c in cells},
            "claims": {c["claim_id"]: claim_word(c["verdict"])
                       for c in rows(root / tree / "claims.csv") if c["primary"] == "true"}}


def claim_word(verdict: str) -> str:
    """A claim's verdict without its reason: holds, refuted or not testable."""
    return next((w for w in ("holds", "refuted", "not testable") if verdict.startswith(w)),
                verdict)


def agreement(a: dict, b: dict, what: str = "verdicts") -> tuple[int, int]:
    """(cells both designs decided, of them those whose verdicts, or kinds, agree)."""
    both = [k for k, v in a[what].items()
            if v != "undecided" and b[what].get(k, "undecided") != "undecided"]
    return len(both), sum(a[what][k] == b[what][k] for k in both)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configfile", nargs="+", default=["config.yaml"], type=file_under(REPO))
    p.add_argument("--out", default="build/bench-designs")
    p.add_argument("--paper-repeats", default="5,10", help="min,max of the paper's rule")
    defaults = load_schema()["properties"]["repeats"]["properties"]
    p.add_argument("--looks", default=",".join(map(str, defaults["looks"]["default"])))
    p.add_argument("--moderated-looks",
                   default=",".join(map(str, defaults["moderated_looks"]["default"])))
    p.add_argument("--designs", default="paper,verdict,moderated",
                   help="which designs to run, the paper's rule first (ratios need it)")
    p.add_argument("--file-size", help="override the study's file size (a quicker run)")
    a = p.parse_args()
    lo, hi = (int(x) for x in a.paper_repeats.split(","))
    looks = [int(x) for x in a.looks.split(",")]
    out = Path(a.out).resolve()
    shutil.rmtree(out, ignore_errors=True)
    moderated_looks = [int(x) for x in a.moderated_looks.split(",")]
    designs = {
        "paper": {"design": "paper", "min": lo, "max": hi, "ci_target": 0.05},
        "verdict": {"design": "verdict", "min": lo, "max": hi, "ci_target": 0.05,
                    "looks": looks},
        "moderated": {"design": "moderated", "min": lo, "max": hi, "ci_target": 0.05,
                      "moderated_looks": moderated_looks},
    }
    designs = {name: designs[name] for name in a.designs.split(",")}
    results = {name: run_design(out / name, a.configfile, rep, a.file_size)
               for name, rep in designs.items()}
    size = f", files of {a.file_size}" if a.file_size else ""
    print(f"study: {' '.join(a.configfile)}{size}; paper rule {lo}-{hi} repeats, 5% target; "
          f"verdict design looks {looks}; moderated design looks {moderated_looks}; T and E "
          "cells of the primary setting")
    print(f"{'design':<9} {'measured':>10} {'wall':>9} {'runs':>6} {'plain':>6} "
          f"{'decided':>12} {'saves':>6} {'costs':>6} {'negl.':>6} {'kinds':>12} "
          f"{'claims decided':>15}")
    for name, r in results.items():
        kinds = sum(v != "undecided" for v in r["kinds"].values())
        claims = sum(v != "not testable" for v in r["claims"].values())
        print(f"{name:<9} {r['measured_s']:>9.1f}s {r['wall_s']:>8.1f}s {r['runs']:>6} "
              f"{r['plain']:>6} {r['decided']:>5} of {r['cells']:<4} {r['saves']:>6} "
              f"{r['costs']:>6} {r['negligible']:>6} {kinds:>5} of {r['cells']:<4} "
              f"{claims:>6} of {len(r['claims']):<4}")
    p_ = results.get("paper")  # without it (one design alone), no ratios to print
    for name, v in results.items():
        if p_ is None or name == "paper":
            continue
        both, agree = agreement(p_, v)
        kinds_both, kinds_agree = agreement(p_, v, "kinds")
        print(f"{name} / paper: measured time {v['measured_s'] / p_['measured_s']:.2f}, "
              f"wall {v['wall_s'] / p_['wall_s']:.2f}, runs {v['runs'] / p_['runs']:.2f}, "
              f"decided verdicts {v['decided']} vs {p_['decided']}; of {both} cells both "
              f"decided, {agree} agree; of {kinds_both} break-even kinds both decided, "
              f"{kinds_agree} agree")
        for claim in sorted(set(p_["claims"]) | set(v["claims"])):
            if p_["claims"].get(claim) != v["claims"].get(claim):
                print(f"  claim {claim}: paper {p_['claims'].get(claim)}, "
                      f"{name} {v['claims'].get(claim)}")


if __name__ == "__main__":
    main()
