"""Benchmark notes: every shipped study's rehearsal before and after a change, file by file.

    .venv/bin/python benchmarks/rehearsal_before_after.py [--rev REV]
        [--renamed OLD=NEW ...] [--keep DIR] [CONFIG ...]

Builds the rehearsal (the whole report from SIMULATED runs, `snakemake rehearsal`) of
each study, once in a checkout of git revision REV (default: HEAD~1) with its own
package first on the path, and once in this work tree. CONFIG are overlays (default:
the default study and every config/*.yaml but the schema; given, those studies
alone). Then it compares every
file of the two rehearsal trees: analysis tables, figure data, generated LaTeX, run
journals and traces (decompressed), and each PDF's text (pdftotext; both trees' PDFs
carry one date), each tree's own
folder read as "<tree>" (runs.csv holds absolute target paths). Logs and the figures'
pixels are left out; a claims.csv that differs is followed by each verdict that changed.
--renamed OLD=NEW reads OLD in the files before as NEW
(a module's dotted name that a refactoring moved and a text names). A refactoring that
changes no behaviour prints "0 differ". --keep DIR leaves the two trees' rehearsals in
DIR/before and DIR/after, to read what differs.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arguments import file_under

REPO = Path(__file__).resolve().parent.parent
SKIPPED = {".log", ".png", ".aux", ".fls", ".fdb_latexmk", ".out", ".toc"}
# One date for both trees' PDFs (pdfTeX's \today, from SOURCE_DATE_EPOCH when
# FORCE_SOURCE_DATE is set): a comparison that crosses midnight found every PDF
# built after it different.
BUILD_DATE = {"SOURCE_DATE_EPOCH": str(int(time.time())), "FORCE_SOURCE_DATE": "1"}


def shipped_overlays() -> list[str]:
    return sorted(str(p.relative_to(REPO)) for p in (REPO / "config").glob("*.yaml")
                  if p.name != "schema.yaml")


def rehearse(tree: Path, overlays: list[str | None]) -> Path:
    """Every study's rehearsal in `tree` (None: the default study), its own package first
    on the path."""
    env = {**os.environ, "PYTHONPATH": str(tree), **BUILD_DATE}
    for overlay in overlays:
        args = [sys.executable, "-m", "snakemake", "--cores", "2", "rehearsal"]
        args += ["--configfile", overlay] if overlay else []
        done = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"{tree}: the rehearsal of {overlay or 'the default study'} failed:\n"
                     f"{done.stderr[-2000:]}")
        print(f"{tree.name}: rehearsed {overlay or 'the default study'}", file=sys.stderr)
    return tree / "rehearsal"


def text_of(path: Path, renamed: dict[str, str] | None = None) -> str:
    if path.suffix == ".pdf":
        text = subprocess.run(["pdftotext", "-q", str(path), "-"], capture_output=True,
                              text=True, check=True).stdout
    else:
        data = gzip.open(path).read() if path.suffix == ".gz" else path.read_bytes()
        text = data.decode(errors="replace")
    for old, new in (renamed or {}).items():
        text = text.replace(old, new)
    return text


def verdict_changes(a: Path, b: Path) -> list[str]:
    """A claims.csv's rows whose verdict changed: claim (setting): before -> after."""
    def verdicts(path):
        with open(path, newline="", encoding="utf-8") as f:
            return {(r["claim_id"], r["setting"]): r["verdict"] for r in csv.DictReader(f)}
    old, new = verdicts(a), verdicts(b)
    return [f"{claim} ({setting}): {old.get((claim, setting))} -> {new.get((claim, setting))}"
            for claim, setting in sorted(old.keys() | new.keys())
            if old.get((claim, setting)) != new.get((claim, setting))]


def compare(before: Path, after: Path, renamed: dict[str, str]) -> tuple[int, list[str]]:
    same, differ = 0, []
    names = {p.relative_to(before) for p in before.rglob("*") if p.is_file()}
    names |= {p.relative_to(after) for p in after.rglob("*") if p.is_file()}
    for name in sorted(names):
        if name.suffix in SKIPPED:
            continue
        a, b = before / name, after / name
        if not (a.exists() and b.exists()):
            differ.append(f"{name}: only {'after' if b.exists() else 'before'}")
        elif (text_of(a, renamed).replace(str(before.parent), "<tree>")
              == text_of(b).replace(str(after.parent), "<tree>")):
            same += 1
        else:
            differ.append(str(name))
            if name.name == "claims.csv":
                differ += [f"    {change}" for change in verdict_changes(a, b)]
    return same, differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="HEAD~1", help="the revision before (default HEAD~1)")
    parser.add_argument("--renamed", action="append", default=[], metavar="OLD=NEW",
                        help="read OLD in the files before as NEW (a moved module's name)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="copy both rehearsals to DIR/before and DIR/after")
    parser.add_argument("configs", nargs="*", type=file_under(REPO),
                        help="overlays (default: the default study and every shipped one)")
    a = parser.parse_args()
    overlays = a.configs or [None, *shipped_overlays()]
    renamed = dict(pair.split("=", 1) for pair in a.renamed)
    with tempfile.TemporaryDirectory(prefix="wattzip-before-") as tmp:
        old, new = Path(tmp) / "before", Path(tmp) / "after"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(old),
                        a.rev], check=True)
        try:
            shutil.copytree(REPO, new, ignore=shutil.ignore_patterns(
                ".git", ".venv", ".snakemake", "results", "rehearsal", "figures"))
            trees = rehearse(old, overlays), rehearse(new, overlays)
            same, differ = compare(*trees, renamed)
            for side, tree in zip(("before", "after"), trees, strict=True) if a.keep else ():
                shutil.copytree(tree, a.keep / side, dirs_exist_ok=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old)],
                           check=False)
    files = [d for d in differ if not d.startswith("    ")]
    studies = f"{len(overlays)} stud{'y' if len(overlays) == 1 else 'ies'}"
    print(f"{studies} rehearsed at {a.rev} and in the work tree: "
          f"{same} files identical, {len(files)} differ (each claims.csv with its verdicts "
          "that changed)")
    for name in differ:
        print(f"  {name}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
