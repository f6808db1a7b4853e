"""Every reported joule with its error budget (GUM: JCGM 100:2008).

The Student-t half-width of the repeats sees only what changes from run to run.
A mean energy also carries errors that repeats cannot average away, or that no
repeat shows. Each is a standard uncertainty of the mean, in joules:

- repeat: the spread of the repeats, s / sqrt(n) (Type A, n - 1 degrees of freedom);
- meter: the backend's stated accuracy (wattzip/data/meter_accuracy.csv, cited), a
  rectangular half-width a, u = a / sqrt(3); the same gain error is in every run, so it
  does not shrink with n;
- sampling: integrating power read every dt misses how the power moved between two
  readings; a change dP between two readings, at an unknown moment inside dt, puts
  the trapezoid off by up to dt * dP / 2 (rectangular), so a run's
  u = dt * sqrt(sum dP_i^2) / (2 sqrt(3)); a counter read at start and stop errs only
  by its update interval at each edge; independent across runs;
- idle: the idle calibration's standard error times the run's time, in the passive
  energy and (with the opposite sign) in the active one;
- model: for estimated energy, the coefficient table's range: the mean re-estimated
  with every row of the table, u = (max - min) / (2 sqrt(3)).

ET (energy times time, J s) has a budget of the same terms, each run's energy error
times its time (the clock's own error is negligible beside them).

They combine in quadrature; the expanded interval is k u_c, k Student's t at the
repeats' degrees of freedom (GUM G.4's Welch-Satterthwaite would raise them for the
exact Type B terms and could give an interval narrower than the repeats' own: we keep
the conservative k). The largest term is named.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from wattzip.meters.coefficients import Coefficients, table
from wattzip.stats import PAPER_CONFIDENCE, Interval, mean, stdev, t_ppf

COMPONENTS = ("repeat", "meter", "sampling", "idle", "model")
STEMS = ("energy_j", "energy_active_j", "energy_passive_j")
# Energy times time: its budget is each run's energy errors times its time.
ET_STEM = "et_js"
SQRT3 = math.sqrt(3.0)


@dataclass(frozen=True)
class Accuracy:
    """One backend's row of the cited accuracy table (None: not stated)."""

    backend: str
    rel: float | None
    abs_w: float | None
    update_interval_s: float | None
    integration: str
    source: str


def _number(text: str) -> float | None:
    return float(text) if text.strip() else None


@cache
def accuracies() -> dict[str, Accuracy]:
    text = resources.files("wattzip").joinpath("data", "meter_accuracy.csv").read_text()
    rows = csv.DictReader(io.StringIO("".join(
        line for line in text.splitlines(keepends=True) if not line.startswith("#"))))
    return {r["backend"]: Accuracy(r["backend"], _number(r["accuracy_rel"]),
                                   _number(r["accuracy_abs_w"]),
                                   _number(r["update_interval_s"]), r["integration"],
                                   r["source"]) for r in rows}


def accuracy(backend: str | None) -> Accuracy | None:
    return accuracies().get(backend or "")


# --- what a run records of its samples ------------------------------------------------------


def sampling_terms(samples: Sequence[tuple[float, float]]) -> tuple[float | None, float | None]:
    """(median gap between readings in s, sqrt(sum of squared changes between readings) in W)
    of one run's power samples: what its sampling term needs (None, None without two)."""
    pts = sorted(samples)
    if len(pts) < 2:
        return None, None
    gaps = sorted(b[0] - a[0] for a, b in zip(pts, pts[1:], strict=False))
    steps = math.fsum((b[1] - a[1]) ** 2 for a, b in zip(pts, pts[1:], strict=False))
    return gaps[len(gaps) // 2], math.sqrt(steps)


def run_sampling_u(run: dict, acc: Accuracy | None) -> float:
    """One run's sampling and integration uncertainty (J); NaN when the run did not record
    its samples' variation (runs from before it was recorded)."""
    tau = (acc.update_interval_s if acc else None) or 0.0
    if acc is not None and acc.integration == "counter":
        interval = run.get("meter_interval_s") or run.get("elapsed_s") or 0.0
        power = (run.get("energy_j") or 0.0) / interval if interval else 0.0
        return math.sqrt(2.0) * power * tau / SQRT3  # each edge up to tau of the run's power
    gap, steps = run.get("sample_gap_s"), run.get("power_step_rss_w")
    if steps is None:
        return math.nan
    return max(gap or 0.0, tau) * steps / (2.0 * SQRT3)


# --- one mean's budget ------------------------------------------------------------------


@dataclass
class UncertaintyBudget:
    """The budget of one mean: each term's standard uncertainty (J), combined, expanded."""

    estimate: float
    components: dict[str, float]
    dof: dict[str, float]
    combined: float
    k: float
    expanded: float
    dominant: str
    notes: list[str] = field(default_factory=list)

    def columns(self, stem: str) -> dict:
        out = {f"u_{stem}_{c}": self.components.get(c, math.nan) for c in COMPONENTS}
        out.update({f"u_{stem}": self.combined, f"k_{stem}": self.k,
                    f"U_{stem}": self.expanded, f"dominant_{stem}": self.dominant,
                    f"budget_note_{stem}": "; ".join(self.notes)})
        return out


def empty_columns(stem: str) -> dict:
    """The budget's columns of a group without energy (no meter): empty, not zero."""
    return UncertaintyBudget(math.nan, {}, {}, math.nan, math.nan, math.nan, "").columns(stem)


def _interval_s(runs: list[dict], stem: str = "energy_j") -> float:
    """The runs' mean meter interval, each weighted as its energy errors enter `stem`."""
    return mean([(r.get("meter_interval_s") or r.get("elapsed_s") or 0.0)
                 * _time_weight(r, stem) for r in runs])


def _estimated(runs: list[dict]) -> bool:
    return any(r.get("meter_method") == "estimated" for r in runs)


def meter_u(value: float, seconds: float, acc: Accuracy | None, stem: str) -> float:
    """The stated accuracy of a (difference of) energy `value` over `seconds` (rectangular).
    Active energy is a difference of two readings of the same meter: an offset in watts
    cancels; a gain error does not."""
    if acc is None or (acc.rel is None and acc.abs_w is None):
        return math.nan
    gain = (acc.rel or 0.0) * abs(value)
    offset = 0.0 if stem == "energy_active_j" else (acc.abs_w or 0.0) * abs(seconds)
    return math.hypot(gain, offset) / SQRT3


def idle_u(runs: list[dict]) -> tuple[float, float]:
    """(the idle power's standard uncertainty in W, its degrees of freedom); NaN unrecorded."""
    u = [r.get("idle_power_u_w") for r in runs]
    if any(x is None for x in u):
        return math.nan, math.inf
    windows = min(int(r.get("idle_windows") or 0) for r in runs)
    return max(u), (windows - 1 if windows > 1 else math.inf)


def model_range(terms: Sequence[tuple[float, list[dict]]], stem: str) -> float:
    """sum(coef * mean(stem)) re-estimated with every row of the coefficient table: its
    (min, max) half-range / sqrt(3), the model's standard uncertainty (0: no estimate)."""
    runs = [r for _, rs in terms for r in rs]
    if not _estimated(runs) or any(r.get("cpu_busy_s") is None for r in runs):
        return 0.0 if not _estimated(runs) else math.nan
    values = []
    for row in table():
        total = 0.0
        for coef, rs in terms:
            per = []
            for r in rs:
                m = Coefficients(row["microarchitecture"], row["min_w_per_thread"],
                                 row["max_w_per_thread"], int(r.get("model_threads") or 1),
                                 "", "")
                t = r.get("meter_interval_s") or r["elapsed_s"]
                energy, passive = m.energy_j(t, r["cpu_busy_s"]), m.idle_w * t
                per.append({"energy_j": energy, "energy_passive_j": passive,
                            "energy_active_j": energy - passive,
                            ET_STEM: energy * r["elapsed_s"]}[stem])
            total += coef * mean(per)
        values.append(total)
    return (max(values) - min(values)) / (2.0 * SQRT3)


def budget(runs: list[dict], stem: str = "energy_j",
           confidence: float = PAPER_CONFIDENCE) -> UncertaintyBudget:
    """The GUM budget of the mean of `stem` (an energy, or ET) over these (verified) runs
    of one group."""
    values = [v for v in (_budgeted(r, stem) for r in runs) if v is not None]
    n = len(values)
    estimate = mean(values)
    acc = accuracy(runs[0].get("meter_source")) if runs else None
    estimated = _estimated(runs)
    notes = []
    comp = {"repeat": stdev(values) / math.sqrt(n) if n > 1 else math.nan}
    dof = {"repeat": n - 1 if n > 1 else 0}
    seconds = _interval_s(runs, stem) if runs else math.nan
    comp["meter"] = 0.0 if estimated else meter_u(estimate, seconds, acc,
                                                  "energy_j" if stem == ET_STEM else stem)
    if not estimated and (acc is None or acc.rel is None):
        notes.append(f"the {runs[0].get('meter_source') if runs else ''} meter states no "
                     "gain accuracy (meter_accuracy.csv)")
    if stem == "energy_passive_j":
        comp["sampling"] = 0.0
    else:
        per_run = [run_sampling_u(r, acc) * _time_weight(r, stem) for r in runs]
        comp["sampling"] = math.sqrt(math.fsum(u * u for u in per_run)) / n if n else math.nan
        if math.isnan(comp["sampling"]):
            notes.append("runs recorded no sample variation")
    if stem in ("energy_j", ET_STEM) or estimated:  # a model's idle: its coefficients
        comp["idle"] = 0.0
    else:
        u_w, dof["idle"] = idle_u(runs)
        comp["idle"] = u_w * seconds
        if math.isnan(u_w):
            notes.append("the idle power's interval is not recorded")
    comp["model"] = model_range([(1.0, runs)], stem) if estimated else 0.0
    return combine(estimate, comp, dof, confidence, notes)


def combine(estimate: float, comp: dict[str, float], dof: dict[str, float],
            confidence: float = PAPER_CONFIDENCE, notes: list[str] | None = None
            ) -> UncertaintyBudget:
    """u_c in quadrature over the known terms; k from the Welch-Satterthwaite degrees of
    freedom (Type B terms count as exact); an unknown repeat term makes it unbounded."""
    known = {c: u for c, u in comp.items() if not math.isnan(u)}
    uc = math.sqrt(math.fsum(u * u for u in known.values()))
    if math.isnan(comp.get("repeat", 0.0)):
        return UncertaintyBudget(estimate, comp, dof, uc, math.inf, math.inf, "repeat", notes or [])
    # k at the fewest degrees of freedom of a Type A term (the repeats, the idle windows),
    # not Welch-Satterthwaite's: an exact Type B term raises that, and the interval could
    # come out narrower than the repeats' own half-width.
    nu = min((dof[c] for c in known if c in dof and known[c] > 0 and dof[c] > 0),
             default=math.inf)
    k = t_ppf(0.5 + confidence / 2.0, min(nu, 1e7))
    dominant = max(known, key=known.get) if uc > 0 else ""
    return UncertaintyBudget(estimate, comp, dof, uc, k, k * uc, dominant, notes or [])


# --- differences of means: the verdicts' and break-even's Type B terms -------------------


def _budgeted(run: dict, stem: str) -> float | None:
    """A run's value of a budgeted quantity: ET is its energy times its time."""
    if stem == ET_STEM:
        e, t = run.get("energy_j"), run.get("elapsed_s")
        return None if e is None or t is None else e * t
    return run.get(stem)


def _time_weight(run: dict, stem: str) -> float:
    """What one joule of a run's energy error is in `stem`'s unit: ET's is the run's time."""
    return (run.get("elapsed_s") or 0.0) if stem == ET_STEM else 1.0


def type_b_variance(terms: Sequence[tuple[float, list[dict]]], stem: str) -> float:
    """The variance (J^2; J^2 s^2 for ET) that sum(coef * mean(stem)) carries besides its
    repeats' spread: the meter's gain error on the difference itself, each arm's sampling
    and the idle power's error on the time difference (active energy). ET = E T carries
    each run's energy errors times its time (the clock's own error is negligible beside
    them). Terms not stated add nothing here; the budget in summary.csv names them. The
    model's range is left out: an estimated verdict is decided again at the table's
    extremes (wattzip.analysis.robustness), which treats that uncertainty exactly, sign
    by sign, where a symmetric interval would not (scaling both coefficients changes no
    sign)."""
    if stem not in STEMS and stem != ET_STEM:
        return 0.0
    runs = [r for _, rs in terms for r in rs if _budgeted(r, stem) is not None]
    if not runs:
        return 0.0
    acc = accuracy(runs[0].get("meter_source"))
    value = math.fsum(c * _mean_budgeted(rs, stem) for c, rs in terms)
    seconds = math.fsum(c * _interval_s(rs, stem) for c, rs in terms if rs)
    estimated = _estimated(runs)
    var = 0.0
    u = 0.0 if estimated else meter_u(value, seconds, acc,
                                      "energy_j" if stem == ET_STEM else stem)
    var += 0.0 if math.isnan(u) else u * u
    if stem != "energy_passive_j":
        for c, rs in terms:
            s = [run_sampling_u(r, acc) * _time_weight(r, stem) for r in rs]
            s = [x for x in s if not math.isnan(x)]
            if s:
                var += c * c * math.fsum(x * x for x in s) / len(rs) ** 2
    if stem in ("energy_active_j", "energy_passive_j") and not estimated:
        u_w, _ = idle_u(runs)
        if not math.isnan(u_w):
            var += (u_w * seconds) ** 2
    return var


def _mean_budgeted(runs: list[dict], stem: str) -> float:
    values = [v for v in (_budgeted(r, stem) for r in runs) if v is not None]
    return mean(values) if values else math.nan


def widen(iv: Interval, extra_var: float, confidence: float) -> Interval:
    """A Welch interval with Type B variance added: the combined interval of a difference,
    at the Welch interval's own degrees of freedom (so never narrower). `confidence` is
    the level `iv` was made at, required: its half-width is read back into a variance."""
    if extra_var <= 0 or not (math.isfinite(iv.lo) and math.isfinite(iv.hi)):
        return iv
    var = 0.0
    if iv.hi > iv.lo and 0 < iv.df < math.inf:
        var = ((iv.hi - iv.lo) / 2.0 / t_ppf(0.5 + confidence / 2.0, iv.df)) ** 2
    total = var + extra_var
    # The repeats' degrees of freedom are kept (see combine): never narrower than Welch's.
    df = iv.df if var > 0 else math.inf
    half = t_ppf(0.5 + confidence / 2.0, min(df, 1e7)) * math.sqrt(total)
    return Interval(iv.estimate, iv.estimate - half, iv.estimate + half, df)


NAMES = {"repeat": "the repeats' spread", "meter": "the meter's stated accuracy",
         "sampling": "sampling and integration", "idle": "the idle baseline",
         "model": "the coefficient table's range"}


def describe_dominant(summary: list[dict], stem: str = "energy_j") -> str:
    """The report's sentence naming the budget's largest term over the summary's groups."""
    counts: dict[str, int] = {}
    for row in summary:
        term = row.get(f"dominant_{stem}")
        if term:
            counts[term] = counts.get(term, 0) + 1
    if not counts:
        return ""
    parts = [f"{NAMES.get(k, k)} in {v}" for k, v in sorted(counts.items(),
                                                           key=lambda kv: -kv[1])]
    # the level of budget()'s expanded interval, by the report's macro for it
    return ("Each energy carries a GUM budget (combined standard uncertainty, "
            "\\HalfWidthConfidencePct{} expanded interval); its largest term is "
            f"{', '.join(parts)} of {sum(counts.values())} groups.")
