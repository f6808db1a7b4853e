"""How often the energy budget's intervals hold the truth, simulated with known truths.

    .venv/bin/python benchmarks/coverage_budget.py [--studies 2000] [--runs 5] [--seed 1]

Each simulated study measures `runs` runs of one operation whose true power is known:
a base power with a step inside the run, the run's length varying from run to run.
Fake meters read it the way the package's meters do (wattzip.meters.base's
integrate_power and integrate_averages), each with one kind of error:

- repeat: a counter read at start and stop (RAPL-like), no error but the runs' spread;
- meter: the same, its readings off by a gain and an offset drawn once per study from
  the WattsUp's stated accuracy (1.5% + 0.3 W, rectangular): the error repeats share;
- sampling: IPMI-like instantaneous readings once a second from the run's start, the
  step always at the same moment of the run: the integration error repeats share;
- lagging logger: WattsUp-like one-second averages written a second late, at a phase
  of their own, with reading noise;
- idle: the active energy, the idle power calibrated from 10 noisy windows;
- model: estimated energy (the utilization model at the table's average row) of a
  machine whose true coefficients are one row of the table, drawn per study;
- combined: meter, sampling and idle errors at once, on active energy.

The truth is the mean energy of the operation's run (computed from the true power).
For each, the table prints how often the repeats' Student-t interval alone holds it,
and how often the budget's expanded interval (wattzip.analysis.uncertainty.budget) does, with
the mean width of the latter over the former.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wattzip.analysis import uncertainty  # noqa: E402
from wattzip.meters.base import integrate_averages, integrate_power  # noqa: E402
from wattzip.meters.coefficients import Coefficients, table  # noqa: E402
from wattzip.stats import half_width, mean, stdev  # noqa: E402

BASE_W, STEP_W, IDLE_W = 100.0, 60.0, 70.0
LENGTH_S, LENGTH_SD_S, STEP_AT_S = 10.0, 0.05, 4.37


def true_energy(length: float) -> float:
    return BASE_W * length + STEP_W * max(length - STEP_AT_S, 0.0)


def true_power(t: float) -> float:
    return BASE_W + (STEP_W if t >= STEP_AT_S else 0.0)


def expected_energy() -> float:
    """E[true_energy(L)], L ~ N(10, 0.05): the step lies well inside every run."""
    return BASE_W * LENGTH_S + STEP_W * (LENGTH_S - STEP_AT_S)


def record(energy: float, length: float, source: str, **extra) -> dict:
    return {"energy_j": energy, "elapsed_s": length, "meter_interval_s": length,
            "meter_source": source, "meter_method": "measured", "verified": True,
            "energy_passive_j": IDLE_W * length, "energy_active_j": energy - IDLE_W * length,
            **extra}


def sampled(length: float, rng: random.Random, noise_w: float = 0.0,
            period: float = 1.0) -> tuple[float, list]:
    """IPMI-like: instantaneous readings every period from the run's start."""
    times = [k * period for k in range(int(length / period) + 1)] + [length]
    pts = [(t, true_power(t) + rng.gauss(0, noise_w)) for t in times]
    return integrate_power(pts, 0.0, length), pts


def averaged(length: float, rng: random.Random, noise_w: float) -> tuple[float, list]:
    """WattsUp-like: each record the mean of the second before it, at a phase of its own."""
    phase = rng.random()
    recs = []
    t = phase - 1.0
    while t < length + 1.0:
        grid = [t - 1.0 + (i + 0.5) / 50 for i in range(50)]
        recs.append((t, mean([true_power(x) for x in grid]) + rng.gauss(0, noise_w)))
        t += 1.0
    return integrate_averages(recs, 0.0, length, 1.0), recs


def study(kind: str, runs: int, rng: random.Random) -> tuple[list[dict], str, float]:
    """(the runs' records, the stem, the truth) of one simulated study."""
    gain = rng.uniform(-0.015, 0.015) if kind in ("meter", "combined") else 0.0
    offset = rng.uniform(-0.3, 0.3) if kind in ("meter", "combined") else 0.0
    idle = [IDLE_W + rng.gauss(0, 2.0) for _ in range(10)]
    idle_hat, idle_u = mean(idle), stdev(idle) / math.sqrt(len(idle))
    if kind == "model":
        return model_study(runs, rng)
    out = []
    for _ in range(runs):
        length = rng.gauss(LENGTH_S, LENGTH_SD_S)
        extra = {}
        if kind in ("sampling", "combined"):
            energy, pts = sampled(length, rng)
            source = "ipmi"
        elif kind == "lagging logger":
            energy, pts = averaged(length, rng, noise_w=1.0)
            source = "wattsup"
        else:
            energy, pts = true_energy(length), []
            source = "wattsup" if kind == "meter" else "powercap"
        if pts:
            extra["sample_gap_s"], extra["power_step_rss_w"] = \
                uncertainty.sampling_terms(pts)
        energy = energy * (1 + gain) + offset * length
        r = record(energy, length, source, **extra)
        if kind in ("idle", "combined"):
            passive = idle_hat * (1 + gain) + offset
            r.update(energy_passive_j=passive * length,
                     energy_active_j=energy - passive * length,
                     idle_power_u_w=idle_u, idle_windows=len(idle))
        out.append(r)
    if kind in ("idle", "combined"):
        return out, "energy_active_j", expected_energy() - IDLE_W * LENGTH_S
    return out, "energy_j", expected_energy()


def model_study(runs: int, rng: random.Random) -> tuple[list[dict], str, float]:
    rows = table()
    truth_row = rng.choice(rows)
    used = Coefficients("avg", mean([r["min_w_per_thread"] for r in rows]),
                        mean([r["max_w_per_thread"] for r in rows]), 8, "", "")
    true = Coefficients("t", truth_row["min_w_per_thread"], truth_row["max_w_per_thread"],
                        8, "", "")
    out = []
    for _ in range(runs):
        length = rng.gauss(LENGTH_S, LENGTH_SD_S)
        busy = length * rng.uniform(0.9, 1.1)
        r = record(used.energy_j(length, busy), length, "model", cpu_busy_s=busy,
                   model_threads=8)
        r["meter_method"] = "estimated"
        out.append(r)
    truth = true.energy_j(LENGTH_S, LENGTH_S)  # E[busy] = E[length]
    return out, "energy_j", truth


KINDS = ("repeat", "meter", "sampling", "lagging logger", "idle", "model", "combined")


def coverage(kind: str, studies: int, runs: int, seed: int) -> tuple[float, float, float]:
    rng = random.Random(f"{seed}-{kind}")
    alone = held = 0
    widths = []
    for _ in range(studies):
        recs, stem, truth = study(kind, runs, rng)
        values = [r[stem] for r in recs]
        m, hw = mean(values), half_width(values)
        b = uncertainty.budget(recs, stem)
        alone += abs(m - truth) <= hw
        held += abs(m - truth) <= b.expanded
        widths.append(b.expanded / hw if hw else math.nan)
    return alone / studies, held / studies, mean([w for w in widths if math.isfinite(w)])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--studies", type=int, default=2000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    print(f"{a.studies} simulated studies of {a.runs} runs each; the truth known; "
          "95% intervals")
    print(f"{'error source':<16} {'repeats alone':>14} {'budget':>8} {'width ratio':>12}")
    for kind in KINDS:
        alone, held, ratio = coverage(kind, a.studies, a.runs, a.seed)
        print(f"{kind:<16} {alone:>14.1%} {held:>8.1%} {ratio:>12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
