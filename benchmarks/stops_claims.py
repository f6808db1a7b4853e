"""What a moderated study decides when its jobs stop where the replay says, one set of
break-even kinds against another, on the same measured runs.

    .venv/bin/python benchmarks/stops_claims.py --results DIR
        --configfile config.yaml config/paper.yaml ... --kinds E [T,E ...] [--keep OUT]

DIR is a measured moderated study's testbed results (runs.csv, settings.csv and
journal/<setting>/ of its primary setting, whose runs alone it keeps). For the kinds
the study asks of each job (wattzip.model.study.Study.kinds) and for each set given
with --kinds, this replays every codec job's looks on its own runs
(benchmarks/guard_replay.replay, the guard the jobs run), keeps of runs.csv the runs
each job had measured when it would have stopped (its codec's runs and the plain pairs
it added, up to that repeat), and analyses them as rule analyze does.
It prints each claim's verdict side by side, and counts the T and E verdicts and
break-even kinds each way decides and whether those both decide agree.

The other jobs' stops would move the priors a little (a job's prior is fitted over the
runs measured before it); the replay keeps the priors the jobs had.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from arguments import existing_dir, existing_file
from guard_replay import CODEC_OPS, GROUPED, journals, replay, up_to

from wattzip import records
from wattzip.analysis.stopping import PLAIN_OPS
from wattzip.model.study import Study

REPO = Path(__file__).resolve().parent.parent


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def kept_runs(study: Study, folder: str, kinds: tuple[str, ...] | None) -> set[tuple]:
    """(started_at, op) of every run the jobs had measured at their replayed stops."""
    stops = replay(study, folder, [("way", GROUPED, tuple(study.looks), kinds, None)])
    kept = set()
    for (file_type, codec), journal in journals(folder).items():
        if codec == "plain" or not journal:
            continue
        last = records.last_measurement(journal)  # a drift's earlier one stays
        own = [r for r in last if r["op"] in (*CODEC_OPS, *PLAIN_OPS)]
        n = stops[(file_type, codec)]["way"][0]
        current = {id(r) for r in last}
        kept |= {(r["started_at"], r["op"]) for r in journal if id(r) not in current}
        kept |= {(r["started_at"], r["op"]) for r in up_to(own, n) or own}
    return kept


def analyze(study: Study, results: Path, rows: list[dict], out: Path) -> None:
    """Rule analyze on `rows`, with the study's verdict options."""
    out.mkdir(parents=True)
    runs = out / "runs.csv"
    with open(runs, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    verdict = study.config["verdict"]
    # Run from the repository (its paper/reference): every path absolute.
    proc = subprocess.run(
        [sys.executable, "-m", "wattzip", "analyze", str(runs.resolve()), "--out",
         str(out.resolve()), "--settings", str((results / "settings.csv").resolve()),
         "--reference", "paper/reference", "--looks", str(len(study.looks)), "--moderated",
         "--margin", str(verdict["margin"]), "--reads-per-write",
         str(verdict["reads_per_write"]), "--effect", str(verdict["effect"])],
        cwd=REPO, check=False, stderr=subprocess.PIPE, text=True)
    if proc.returncode:
        sys.exit(f"stops_claims.py: wattzip analyze failed on {runs}:\n{proc.stderr[-2000:]}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", required=True, type=existing_dir,
                   help="results/<study>/<testbed> of a measured moderated study")
    p.add_argument("--configfile", nargs="+", required=True, type=existing_file)
    p.add_argument("--kinds", nargs="+", required=True, metavar="M,...",
                   help="sets of break-even kinds to replay beside the study's (E, T,E)")
    p.add_argument("--keep", type=Path, help="write each way's analysis here")
    a = p.parse_args()
    study = Study.from_files(a.configfile)
    if not study.moderated_design:
        sys.exit("stops_claims.py: the study is not of the moderated design")
    # The primary setting's jobs, as the report's verdicts: another setting's runs would
    # be analysed with none of their stops replayed.
    setting = study.primary.name
    folder = str(a.results / "journal" / setting)
    if not os.path.isdir(folder):
        sys.exit(f"stops_claims.py: no journals of the primary setting {setting} in {folder}")
    every = [r for r in read_csv(a.results / "runs.csv") if r["setting"] == setting]
    print(f"the primary setting {setting}")
    ways = [("asked", None), *((f"kinds {k}", tuple(m for m in k.split(",") if m))
                               for k in a.kinds)]
    base = a.keep or Path(tempfile.mkdtemp(prefix="stops-claims-"))
    tables = {}
    for name, kinds in ways:
        kept = kept_runs(study, folder, kinds)
        rows = [r for r in every if r["codec"] == "plain" and not r["shared_plain_of"]
                or (r["started_at"], r["op"]) in kept]
        out = base / name.replace(" ", "-").replace(",", "")
        analyze(study, a.results, rows, out)
        tables[name] = (len(rows), read_csv(out / "claims.csv"), read_csv(out / "breakeven.csv"))
        print(f"{name:10} {len(rows)} runs kept of {len(every)}")
    names = [n for n, _ in ways]
    claims = {n: {c["claim_id"]: c["verdict"] for c in tables[n][1]} for n in names}
    print(f"{'claim':28}" + "".join(f"{n:>20}" for n in names))
    for claim in claims[names[0]]:
        said = [claims[n].get(claim, "-").split(":")[0] for n in names]
        print(f"{claim:28}" + "".join(f"{v:>20}" for v in said)
              + ("" if len(set(said)) == 1 else "   <- differs"))
    for metric in ("T", "E"):
        cells = {n: {(b["file_type"], b["codec"]): b for b in tables[n][2]
                     if b["metric"] == metric} for n in names}
        for n in names:
            mine = cells[n]
            verdicts = sum(b["verdict"] != "undecided" for b in mine.values())
            kinds = sum(b["decided"] == "true" for b in mine.values())
            print(f"{metric} {n:10} verdicts decided {verdicts} of {len(mine)}, break-even "
                  f"kinds decided {kinds}")
        first, *others = names
        for n in others:
            both = [k for k in cells[first] if cells[first][k]["decided"] == "true"
                    and cells[n].get(k, {}).get("decided") == "true"]
            agree = sum(cells[first][k]["kind"] == cells[n][k]["kind"] for k in both)
            vboth = [k for k in cells[first] if "undecided" not in (
                cells[first][k]["verdict"], cells[n].get(k, {}).get("verdict", "undecided"))]
            vagree = sum(cells[first][k]["verdict"] == cells[n][k]["verdict"] for k in vboth)
            print(f"{metric} {first} against {n}: of {len(vboth)} verdicts both decided "
                  f"{vagree} agree; of {len(both)} kinds both decided {agree} agree")
    if not a.keep:
        print(f"(analyses in {base})", file=sys.stderr)


if __name__ == "__main__":
    main()
