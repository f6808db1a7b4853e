"""Coverage of the moderated design against a known truth, simulated.

    .venv/bin/python benchmarks/coverage_moderated.py [--studies 200] [--seed 1]
        [--file-types 4] [--looks 2,3,4,8 ...]

Simulates whole studies whose truth is known: 11 codecs x 4 file types (the paper's),
T of each arm drawn around a true mean whose relative spread (CV) differs from arm to
arm (log-normal around 2%). The moderated design as it runs: one plain arm per file
type, each codec's job adding a pair to it (plain first or last in turn) and more
while it is shorter than the job's look, as wattzip.measure.interleaving.repeat_arms
schedules them. A look compares the codec's n runs with the shared arm's last n
pairs, the latest measured. The cells run cheap first; at each planned look (the
schema's repeats.moderated_looks, each at alpha / looks) a cell's verdict is moderated
by priors fitted over the cells measured before it and its own arms
(wattzip.analysis.moderated.cell_priors),
as a job does, and the analysis reports the verdict of the look it stopped at. Two
guards side by side on the same simulated cells: a codec's arms of a kind judged
together (as the jobs and the analysis now do), and each arm judged alone against the
study's prior (as they did before); beside them the verdict design (Welch per cell,
looks 3, 5, 8). Printed per scenario: the coverage of the stopping look's interval of
S = (w + r) - (c + d) (over every cell; and over the noisy codec's cells alone), wrong
verdicts (saves or costs on the wrong side, negligible outside the margin), undecided
cells, cells decided at 2 runs per arm, and the runs per arm spent; and the coverage of
the study's first FIRST cells alone, whose priors are fitted from a few arms.

Scenarios: alike (every arm's CV from one distribution), one noisy codec (its
compress and decompress arms 4x the CV; the plain copies of its job are not
noisier), heavy tails (Student t with 3 df, same CV), a drifting machine (+6%
slower, linearly, from the study's first run to its last; the truth of a cell is
its saving at the time its job ran), a level step (15% slower from one job on, at a
random point of the study, between two jobs, where a job's drift check does not see
it: the shared plain arm's pairs from before the step then meet a codec's runs after
it).
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Callable, Sequence

from wattzip.analysis import moderated, verdicts
from wattzip.measure.interleaving import with_shared_plain
from wattzip.resources import load_schema
from wattzip.stats import mean

_REPEATS = load_schema()["properties"]["repeats"]["properties"]
LOOKS = tuple(_REPEATS["moderated_looks"]["default"])  # as a study plans them
WELCH_LOOKS = tuple(_REPEATS["looks"]["default"])
MARGIN = 0.02
SCENARIOS = ("alike", "one noisy codec", "heavy tails", "drifting machine", "a level step")
STEP = 1.15  # "a level step": the machine 15% slower from one job on, for good
# The study's first cells, whose priors are fitted from few arms, scored on their own.
FIRST = 4


def cells(rng: random.Random, codecs: int = 11, file_types: int = 2) -> list[dict]:
    """Each cell's true means (w, c, r, d) and CVs; codec 0 is the one that may be noisy."""
    out = []
    for ftype in range(file_types):
        w, r = 10.0 * (1 + ftype), 5.0 * (1 + ftype)
        for codec in range(codecs):
            speed = math.exp(rng.uniform(-1.5, 2.5))  # codecs 0.2x to 12x the plain copy
            saving = rng.choice((-0.3, -0.05, 0.0, 0.01, 0.05, 0.3))  # of the baseline
            c = w * speed * 0.6
            d = r + w - c + saving * (w + r)  # S = (w + r) - (c + d) = saving (w + r)
            if d <= 0:
                d, c = r * 0.3, w + r * 0.7 - saving * (w + r)
            means = {"w": w, "r": r, "c": c, "d": d}
            cv = {k: 0.02 * math.exp(rng.gauss(0, 0.35)) for k in means}
            out.append({"codec": codec, "means": means, "cv": cv, "cost": c + d})
    return sorted(out, key=lambda cell: cell["cost"])  # cheap first


def noise(rng: random.Random, scenario: str) -> float:
    if scenario == "heavy tails":
        return rng.gauss(0, 1) / math.sqrt(rng.gammavariate(1.5, 2.0) / 3.0) / math.sqrt(3)
    return rng.gauss(0, 1)


def step_at(rng: random.Random, scenario: str, jobs: int) -> int:
    """The job from which "a level step" holds (between two jobs, where no job's drift
    check sees it); past the last job in other scenarios."""
    return rng.randrange(1, jobs) if scenario == "a level step" else jobs


def measure(rng, cell, scenario, n, clock, span, level=1.0):
    """n ABBA repeats of a cell's own four arms: {arm: values}, and the drift factor at
    its time (the verdict design); `level`, the machine's speed level during the job."""
    runs = {k: [] for k in "wcrd"}
    times = []
    for repeat in range(1, n + 1):
        order = ("w", "r", "c", "d") if repeat % 2 else ("c", "d", "w", "r")
        for arm in order:
            clock[0] += 1
            drift = (1 + 0.06 * clock[0] / span if scenario == "drifting machine"
                     else 1.0) * level
            times.append(drift)
            cv = cell["cv"][arm] * (4 if scenario == "one noisy codec" and cell["codec"] == 0
                                    and arm in "cd" else 1)
            runs[arm].append(cell["means"][arm] * drift * max(0.05, 1 + cv * noise(
                rng, scenario)))
    return runs, mean(times)


def shared_plain_study(rng, scenario: str, study: list[dict], grouped: bool = True,
                       looks: tuple[int, ...] = LOOKS) -> list[dict]:
    """The moderated design with one plain arm per file type: each job adds a plain pair
    (more while the arm is shorter than the repeat), its looks compare the codec's first
    n runs with the arm's last n pairs; the priors hold the other file types' arms whole.
    `grouped`: a codec's arms of a kind are judged together (wattzip.analysis.moderated.
    cell_priors, as the jobs and the analysis do); otherwise each arm alone, as before.
    `looks`: the planned looks (repeats.moderated_looks)."""
    each = verdicts.look_confidence(0.95, len(looks))
    ftypes = sorted({cell["means"]["w"] for cell in study})
    span = 2 * looks[-1] * len(study) / 2 + 2 * (len(study) + looks[-1] * len(ftypes))
    clock, done, out = [0], [], []
    pools = {w: {"w": [], "r": []} for w in ftypes}
    noisy = 4 if scenario == "one noisy codec" else 1
    step = step_at(rng, scenario, len(study))

    def run(cell, arm):
        """One run of an arm at the study's clock: its value, and the machine's drift."""
        clock[0] += 1
        drift = (1 + 0.06 * clock[0] / span if scenario == "drifting machine" else 1.0) * (
            STEP if len(done) >= step else 1.0)
        cv = cell["cv"][arm] * (noisy if cell["codec"] == 0 and arm in "cd" else 1)
        return cell["means"][arm] * drift * max(0.05, 1 + cv * noise(rng, scenario)), drift

    for cell in study:
        pool, runs, times = pools[cell["means"]["w"]], {"c": [], "d": []}, []
        for repeat in range(1, looks[-1] + 1):
            pairs = min(len(pool["w"]), len(pool["r"]))
            order = [a for pair in with_shared_plain("wr", "cd", pairs, repeat) for a in pair]
            for arm in order:
                value, drift = run(cell, arm)
                if arm in "wr":
                    pool[arm].append(value)
                else:
                    runs[arm].append(value)
                    times.append(drift)
            if repeat not in looks:
                continue
            w, r = pool["w"][-repeat:], pool["r"][-repeat:]  # its last n pairs, in time
            codec = cell["codec"] if grouped else object()  # alone: a group of its own
            plain = "plain" if grouped else object()
            own = {"w": ("plain-write", w, plain), "c": ("compress-write", runs["c"], codec),
                   "r": ("plain-read", r, plain), "d": ("decompress-read", runs["d"], codec)}
            others = [(op, p[k], plain if grouped else object())
                      for w, p in pools.items() if p is not pool
                      for k, op in (("w", "plain-write"), ("r", "plain-read"))]
            priors = moderated.cell_priors(own, [*(a for c in done for a in c), *others])
            v = moderated.decide(w, runs["c"], r, runs["d"], priors, reads_per_write=1.0,
                                 margin=MARGIN, confidence=each)
            if v.verdict != verdicts.UNDECIDED:
                break
        group = cell["codec"] if grouped else object()
        done.append([("compress-write", list(runs["c"]), group),
                     ("decompress-read", list(runs["d"]), group)])
        out.append({"cell": cell, "runs": runs, "n": repeat, "drift": mean(times),
                    "verdict": v, "position": len(done)})
    return out


def sequential(arms_at: Callable[[int], tuple], looks: Sequence[int], *,
               reads_per_write: float, margin: float, confidence: float
               ) -> tuple[verdicts.Verdict, int]:
    """The planned-looks procedure on one cell: `arms_at(n)` gives the four arms' first n
    runs; stop at the first look that decides, each look at alpha / len(looks) of the
    overall `confidence`. Returns the verdict and the runs per arm it used."""
    each = verdicts.look_confidence(confidence, len(looks))
    for n in looks:
        verdict = verdicts.decide(*arms_at(n), reads_per_write=reads_per_write, margin=margin,
                         confidence=each)
        if verdict.verdict != verdicts.UNDECIDED:
            return verdict, n
    return verdict, looks[-1]


def welch_study(rng, scenario: str, study: list[dict]) -> list[dict]:
    """The verdict design on the same cells: each cell's own Welch interval."""
    span = 4 * WELCH_LOOKS[-1] * len(study) / 2
    clock, out = [0], []
    step = step_at(rng, scenario, len(study))
    for cell in study:
        runs, drift = measure(rng, cell, scenario, WELCH_LOOKS[-1], clock, span,
                              STEP if len(out) >= step else 1.0)
        v, n = sequential(lambda k, r=runs: (r["w"][:k], r["c"][:k], r["r"][:k],
                                                      r["d"][:k]), WELCH_LOOKS,
                                   reads_per_write=1.0, margin=MARGIN, confidence=0.95)
        clock[0] -= 4 * (WELCH_LOOKS[-1] - n)
        out.append({"cell": cell, "runs": runs, "n": n, "drift": drift, "verdict": v,
                    "position": len(out) + 1})
    return out


def score(rows: list[dict]) -> dict:
    """Coverage, wrong and undecided verdicts, runs per arm, over the rows."""
    covered = wrong = undecided = runs = noisy = noisy_covered = at_two = 0
    first = first_covered = 0
    for row in rows:
        m, v = row["cell"]["means"], row["verdict"]
        truth = row["drift"] * ((m["w"] + m["r"]) - (m["c"] + m["d"]))
        band = MARGIN * row["drift"] * (m["w"] + m["r"])
        hit = v.lo <= truth <= v.hi
        covered += hit
        if row["position"] <= FIRST:
            first += 1
            first_covered += hit
        if row["cell"]["codec"] == 0:
            noisy += 1
            noisy_covered += hit
        wrong += ((v.verdict == verdicts.SAVES and truth <= 0)
                  or (v.verdict == verdicts.COSTS and truth >= 0)
                  or (v.verdict == verdicts.NEGLIGIBLE and abs(truth) >= band))
        undecided += v.verdict == verdicts.UNDECIDED
        runs += row["n"]
        at_two += row["n"] == 2 and v.verdict != verdicts.UNDECIDED
    k = len(rows)
    return {"coverage": covered / k, "noisy": noisy_covered / noisy,
            "first": first_covered / first, "wrong": wrong / k,
            "undecided": undecided / k, "runs": runs / k, "at_two": at_two / k}


def table(studies: int, seed: int, file_types: int,
          extra_looks: tuple[tuple[int, ...], ...] = ()) -> list[str]:
    lines = [f"| scenario | design | coverage | coverage, codec 0 | coverage, first {FIRST} "
             "cells | wrong verdicts | undecided | decided at 2 runs | runs per arm |",
             "|---|---|---|---|---|---|---|---|---|"]
    designs = [("moderated, a codec's arms judged together", shared_plain_study),
               ("moderated, each arm judged alone",
                lambda *a: shared_plain_study(*a, grouped=False)),
               *((f"moderated, together, looks {', '.join(map(str, x))}",
                  lambda *a, x=x: shared_plain_study(*a, looks=x)) for x in extra_looks),
               ("verdict", welch_study)]
    for scenario in SCENARIOS:
        for name, run in designs:
            rng = random.Random(seed)
            rows = []
            for _ in range(studies):
                rows += run(rng, scenario, cells(rng, file_types=file_types))
            s = score(rows)
            cols = ("coverage", "noisy", "first", "wrong", "undecided", "at_two")
            lines.append(f"| {scenario} | {name} | "
                         + " | ".join(f"{s[c]:.3f}" for c in cols) + f" | {s['runs']:.2f} |")
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--studies", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--file-types", type=int, default=4)
    p.add_argument("--looks", nargs="*", default=[], metavar="N,N,...",
                   help="other sets of the moderated design's looks, judged together")
    a = p.parse_args()
    extra = tuple(tuple(int(n) for n in x.split(",")) for x in a.looks)
    print(f"{a.studies} simulated studies of {11 * a.file_types} cells per scenario; "
          f"looks {LOOKS} "
          f"(moderated), {WELCH_LOOKS} (verdict), each at alpha / looks; margin {MARGIN:.0%}")
    print("\n".join(table(a.studies, a.seed, a.file_types, extra)))


if __name__ == "__main__":
    main()
