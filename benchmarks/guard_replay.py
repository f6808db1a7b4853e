"""Where each codec's job stops under each outlier guard and each set of looks, replayed
side by side on one measured run of the moderated design, and what those stops cost at
the study's scale.

    .venv/bin/python benchmarks/guard_replay.py --journals DIR --cache PILOT
        --configfile config.yaml config/paper.yaml ... [--top N] [--looks 2,4,8 2,3,4,8]
        [--kinds T,E] [--look-alpha 0.5,0.5,0.5,0.5]

DIR is a measured run's journals of one setting (results/<study>/<testbed>/journal/
<setting>/); PILOT a plan's cached pilot (pilot.json). For every codec's job this
replays its looks (wattzip.analysis.stopping.VerdictLooks, as the job ran them) on the
job's own runs (its last measurement, after any drift) and on every other journal's
verified runs that had ended before the job began (the journals it read then), under two
guards on the same runs:

- together: a codec's arms of a kind judged together (wattzip.analysis.moderated.
  cell_priors, as the jobs run now);
- alone: each arm judged alone against the study's prior, as they ran before (every
  arm a group of its own, which is what cell_priors then does).

With --looks, each set of looks given (e.g. 2,4,8 2,3,4,8) is replayed too, under the
first guard: which looks the moderated design plans (repeats.moderated_looks). With
--kinds, each set of break-even kinds given (e.g. T,E) is replayed too, at the study's
looks under the first guard, in place of the kinds the study asks each job to decide
(wattzip.model.study.Study.kinds: verdict.kind_metrics and those the claims read).
With --look-alpha, each split of alpha over the study's looks given is replayed too:
the share of alpha each look spends (the study's: 1/looks each, Bonferroni). Shares
that add up to more than 1 do not hold the looks at 95% together; they bound what a
group-sequential boundary (whose looks share their runs) could save: no boundary
spends more at a look than alpha itself.

A job stops at the first look whose T and E verdicts are decided and whose break-even
kinds (those asked of it) are closed; a cell still open at its last look is counted as
left open. Where a way would look beyond the runs the job measured (its own looks
stopped it earlier), its stop is counted at that next look: a lower bound, so the ratio
understates a saving of the way that stopped first. Each cell's stop is priced
at PILOT for the study's file size (write-read pairs of the codec, as
benchmarks/stops_at_scale.py prices them; the shared plain arm, under 1% of a pass, is
left out of both). The drift check's re-measurements are not replayed: they are the
machine's, not the guard's.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import json
import os
from collections import Counter
from dataclasses import dataclass

from arguments import existing_file, setting_journals

from wattzip import records
from wattzip.analysis import moderated
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.stopping import PLAIN_OPS, VerdictLooks
from wattzip.measure.drift import REFERENCE_SUFFIX
from wattzip.model import plan
from wattzip.model.jobs import Job
from wattzip.model.study import Study

CODEC_OPS = ("compress-write", "decompress-read")
GROUPED = moderated.cell_priors


@dataclass(frozen=True)
class SplitLooks(VerdictLooks):
    """The looks with alpha split otherwise: share i of alpha at look i."""

    shares: tuple[float, ...] = ()

    def look_confidence(self, n: int) -> float:
        at = self.looks.index(n) if n in self.looks else len(self.looks) - 1
        return 1 - (1 - self.options.confidence) * self.shares[at]


def replay_options(study: Study, planned: tuple[int, ...]) -> AnalysisOptions:
    """The study's options as its moderated jobs decide by, at these planned looks."""
    return dataclasses.replace(study.analysis_options, looks=len(planned), moderated=True)


def each_alone(own, others):
    """cell_priors with every arm a group of its own: the guard as it was, arm by arm."""
    return GROUPED({k: (op, v, object()) for k, (op, v, _) in own.items()},
                   [(op, v, object()) for op, v, _ in others])


def journals(folder: str) -> dict[tuple[str, str], list[dict]]:
    """Every job's journal of the setting: (file type, codec) -> its runs."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "*", "*.jsonl"))):
        if path.endswith(REFERENCE_SUFFIX):
            continue
        file_type, name = path.split(os.sep)[-2], os.path.basename(path)[:-len(".jsonl")]
        out[(file_type, name)] = records.read_journal(path, required=records.RUN_REQUIRED)
    return out


def up_to(runs: list[dict], n: int) -> list[dict]:
    """The job's runs until its codec's n-th verified run of each operation."""
    last = 0
    for op in CODEC_OPS:
        verified = [r["repeat"] for r in runs if r["op"] == op and r.get("verified")]
        if len(verified) < n:
            return []
        last = max(last, sorted(verified)[n - 1])
    return [r for r in runs if r["repeat"] <= last]


def stop(looks: VerdictLooks, runs: list[dict]) -> tuple[int, bool, bool]:
    """(the look the job stops at, whether its runs reached that look, whether it stopped
    decided rather than at its last look with a verdict or kind still open)."""
    for n in looks.looks:
        mine = up_to(runs, n)
        if not mine:
            return n, False, True
        decided = looks.decisions(mine, CODEC_OPS, n)
        if (decided and "undecided" not in decided.values()
                and not looks.open_kinds(mine, CODEC_OPS, n)):
            return n, True, True
    return looks.looks[-1], True, False


def variants(study: Study, extra_looks: list[tuple[int, ...]],
             extra_kinds: list[tuple[str, ...]] = (),
             extra_shares: list[tuple[float, ...]] = ()) -> list[tuple]:
    """(name, guard, looks, kinds, shares) of every way replayed: both guards at the
    study's looks and kinds (None: each job's own, Study.kinds) and alpha split evenly
    over its looks (None), then each set of looks, of kinds and of alpha's shares given,
    under the guard the jobs run."""
    looks = tuple(study.looks)
    for shares in extra_shares:
        if len(shares) != len(looks):
            raise SystemExit(f"--look-alpha {','.join(map(str, shares))}: one share for "
                             f"each of the study's looks {looks}")
    return [("together", GROUPED, looks, None, None),
            ("alone", each_alone, looks, None, None),
            *((f"looks {','.join(map(str, x))}", GROUPED, x, None, None) for x in extra_looks),
            *((f"kinds {','.join(k) or 'none'}", GROUPED, looks, k, None)
              for k in extra_kinds),
            *((f"alpha {','.join(f'{x:g}' for x in shares)}", GROUPED, looks, None, shares)
              for shares in extra_shares)]


def job_runs(every: dict[tuple[str, str], list[dict]], cell: tuple[str, str]
             ) -> tuple[list[dict], tuple[dict, ...]]:
    """(the job's own runs of its four operations in its last measurement, a drift's
    earlier one left out; the runs of every other journal's last measurement that had
    ended when it began, the runs its looks read)."""
    own = records.last_measurement(every[cell])  # a drift measures again
    began = min(r["started_at"] for r in own)
    prior = tuple(r for other, runs in every.items() if other != cell
                  for r in records.last_measurement(runs) if r["ended_at"] <= began)
    return [r for r in own if r["op"] in (*CODEC_OPS, *PLAIN_OPS)], prior


def pricer(study: Study, cache: str):
    """price(cell, n): n write-read pairs of the cell at the study's file size, at the pilot
    in `cache` (as benchmarks/stops_at_scale.py prices them)."""
    with open(cache, encoding="utf-8") as f:
        rates = json.load(f)

    def price(cell: tuple[str, str], n: int) -> float:
        return n * (plan.pair_s(rates["|".join(cell)], study.file_size_bytes, None, False)
                    + 2 * plan.RUN_PREPARE_S)
    return price


def replay(study: Study, folder: str, ways: list[tuple]
           ) -> dict[tuple[str, str], dict[str, tuple[int, bool, bool]]]:
    every = journals(folder)
    out = {}
    for (file_type, codec), journal in every.items():
        if codec == "plain" or not journal:
            continue
        own, prior = job_runs(every, (file_type, codec))
        stops = {}
        asked = study.kinds(Job(study.first_testbed, "", file_type, codec))
        for name, priors, planned, kinds, shares in ways:
            kind, extra = (VerdictLooks, {}) if shares is None else (SplitLooks,
                                                                      {"shares": shares})
            looks = kind(planned, replay_options(study, planned), prior_runs=prior,
                         plain_type=file_type,
                         kind_metrics=asked if kinds is None else kinds, **extra)
            moderated.cell_priors = priors
            try:
                stops[name] = stop(looks, own)
            finally:
                moderated.cell_priors = GROUPED
        out[(file_type, codec)] = stops
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--journals", required=True, type=setting_journals,
                   help="results/<study>/<testbed>/journal/<setting>")
    p.add_argument("--cache", required=True, type=existing_file,
                   help="the plan's cached pilot (pilot.json)")
    p.add_argument("--configfile", nargs="+", required=True, type=existing_file)
    p.add_argument("--top", type=int, default=0, help="also name the N cells the guards "
                   "price most differently")
    p.add_argument("--looks", nargs="*", default=[], metavar="N,N,...",
                   help="sets of looks to replay as well, under the jobs' guard")
    p.add_argument("--kinds", nargs="*", default=[], metavar="M,...",
                   help="sets of break-even kinds to replay as well (T,E: every kind)")
    p.add_argument("--look-alpha", nargs="*", default=[], metavar="S,S,...",
                   help="splits of alpha over the study's looks to replay as well: each "
                   "look's share (the study's: 1/looks each)")
    a = p.parse_args()
    study = Study.from_files(a.configfile)
    price = pricer(study, a.cache)
    ways = variants(study, [tuple(int(n) for n in x.split(",")) for x in a.looks],
                    [tuple(m for m in x.split(",") if m) for x in a.kinds],
                    [tuple(float(s) for s in x.split(",")) for x in a.look_alpha])
    stops = replay(study, a.journals, ways)

    print(f"{len(stops)} codec cells replayed; looks {study.looks}; priced at "
          f"{study.file_size_bytes >> 20} MiB files")
    totals = {}
    floor = sum(price(cell, study.looks[0]) for cell in stops)
    for name, *_ in ways:
        mine = [s[name] for s in stops.values()]
        counts = Counter(n for (n, _, _) in mine)
        beyond = sum(not reached for (_, reached, _) in mine)
        left_open = sorted("/".join(cell) for cell, s in stops.items() if not s[name][2])
        totals[name] = sum(price(cell, s[name][0]) for cell, s in stops.items())
        print(f"{name:9} stopped at " + ", ".join(f"{n} runs: {k}" for n, k in
                                                   sorted(counts.items()))
              + f" ({beyond} beyond the runs measured, counted at that look); "
              f"{totals[name] / 3600:.2f} h of measurement, {totals[name] / floor:.2f} times "
              f"every cell at its first look; left open at the last look: "
              f"{', '.join(left_open) or 'none'}")
    print(f"together / alone: {totals['together'] / totals['alone']:.2f} of the measurement; "
          f"every cell at its first look is {floor / 3600:.2f} h (the plan's minimum less "
          "the plain arm)")
    for name, *_ in ways[2:]:
        print(f"{name} / the study's looks ({','.join(map(str, study.looks))}) and kinds: "
              f"{totals[name] / totals['together']:.2f} of the measurement")
    moved = sorted(stops.items(), key=lambda kv: -abs(price(kv[0], kv[1]["alone"][0])
                                                      - price(kv[0], kv[1]["together"][0])))
    for cell, s in moved[:a.top]:
        print(f"  {'/'.join(cell)}: together {s['together'][0]} runs, alone "
              f"{s['alone'][0]}{'' if s['alone'][1] else '+'} runs, "
              f"{(price(cell, s['alone'][0]) - price(cell, s['together'][0])) / 60:+.1f} min")


if __name__ == "__main__":
    main()
