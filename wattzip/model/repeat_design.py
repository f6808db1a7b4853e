"""The repeat design in a sentence, for the report (its \\RepeatDesign): the paper's
rule, the verdict design or the moderated design, with what each job stopped on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wattzip.analysis import moderated
from wattzip.measure import drift
from wattzip.stats import OUTLIER_MIN_RUNS, OUTLIER_Z, PAPER_CONFIDENCE

if TYPE_CHECKING:
    from wattzip.model.study import Study


def describe(study: Study) -> str:
    """The study's repeat design as the report states it."""
    rep = study.repeats
    if not study.verdict_design:
        if rep["min"] >= rep["max"]:
            return (f"the paper's rule at a fixed {rep['max']} runs per operation: "
                    "repeats.min equals repeats.max, so no run was added whatever the "
                    "half-widths")
        return (f"the paper's rule: at least {rep['min']} and at most {rep['max']} runs "
                f"per operation, more until each {PAPER_CONFIDENCE:.0%} half-width of "
                f"{watched(rep['watch'])} was under {100 * rep['ci_target']:g}% of its mean"
                + _outliers(rep["max"] > OUTLIER_MIN_RUNS, "one more for each"))
    looks = study.looks
    confidence = study.analysis_options.confidence
    stop = ("stopped at the first look that decided its T and E verdicts and "
            f"{_kinds_decided(study)}"
            + _outliers(any(n >= OUTLIER_MIN_RUNS for n in looks[:-1]),
                        "going on to the next look for a"))
    if study.moderated_design:
        return (f"the moderated design: planned looks at {', '.join(map(str, looks))} "
                f"runs per arm, each at alpha / {len(looks)} (Bonferroni, {confidence:.0%} "
                "overall), each arm's variance moderated by an empirical-Bayes prior fitted over "
                "the study's arms of its operation kind and metric (limma's moderated t, "
                "Smyth 2004; a codec whose arms of a kind, pooled, lay above the "
                f"prior's {1 - moderated.GUARD:.0%} F quantile was moderated towards "
                "its own other arms of that kind, and an arm above the "
                f"{1 - moderated.ARM_GUARD:.0%} F quantile of its prior kept its own "
                "variance); "
                "one plain arm per setting and file type, to which each codec's job "
                "added a pair (plain first or last in turn through the study's order, "
                "more while the arm held fewer pairs than the job's look); each look "
                "compared the codec's n runs with the arm's last n pairs, and each job "
                + stop)
    return (f"the verdict design: planned looks at {', '.join(map(str, looks))} runs per "
            f"arm, each at alpha / {len(looks)} (Bonferroni, {confidence:.0%} overall); each "
            "codec's "
            "job measured its own plain arm, interleaved with the codec's in ABBA order "
            "(plain, codec; codec, plain; ...) against drift, and " + stop)


WATCHED_NAMES = {"elapsed": "T", "user": "user time", "system": "system time",
                 "wait": "wait time (elapsed less user and system)", "energy": "E",
                 "ET": "ET"}


def watched(watch) -> str:
    """What the paper's rule watched (repeats.watch), as the report names it."""
    names = [WATCHED_NAMES[w] for w in watch]
    return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1]


def intervals(study: Study) -> dict[str, str]:
    """The intervals that decide a break-even cell, as the report names them (TeX), and
    what the half-width target was to the design: the paper's rule stops on it, the
    planned looks do not."""
    return {
        "be_intervals": "moderated-$t$" if study.moderated_design else "Welch-$t$",
        "ci_target_role": (
            ", which did not stop this design's runs," if study.verdict_design
            else ", which could add no run here (repeats.min equals repeats.max),"
            if study.repeats["min"] >= study.repeats["max"] else ""),
    }


def drift_check(study: Study) -> str:
    """The drift check as the report states it: a job measured again is part of the design,
    and a testbed whose speed switches levels within seconds flags often (docs/statistics.md)."""
    check = study.config["drift"]
    if not check["repeats"]:
        return "No drift check: the machine's drift over a job was not measured (drift.repeats 0)."
    again = "once" if drift.EPOCHS == 2 else f"up to {drift.EPOCHS - 1} times"
    return (f"Each job was measured again, {again}, when a fixed reference operation "
            f"({' '.join(drift.REFERENCE_ARGV[:2])} of a fixed text of "
            f"{drift.REFERENCE_BYTES >> 20} MiB in the page cache), run {check['repeats']} "
            "times before the job's first run and after its last, changed in time or "
            f"energy beyond the reference's noise (a {drift.CONFIDENCE:.0%} interval from the "
            "spread of its "
            f"means over {drift.PHASES} such phases {drift.PHASE_GAP_S:g} s apart at each "
            "setting's idle calibration, pooled with the changes between one job's last "
            "phase and the next job's first, seconds apart, in the same setting before the "
            "job; where a calibration held no phases, as an idle "
            "power given by hand, Welch's interval of the two ends' repeats) and by more than "
            f"{100 * check['max_change']:g}% (the drift check); the runs it measured again "
            "enter no statistic, and those of a job that drifted again are kept, marked "
            "drift_warning.")


def _outliers(possible: bool, how: str) -> str:
    """The outlier clause, where the design's runs can reach an outlier check (at least
    OUTLIER_MIN_RUNS runs) with a further run or look still to come."""
    return (f", {how} run newly found an outlier (modified Z > {OUTLIER_Z:g} among at least "
            f"{OUTLIER_MIN_RUNS} runs; kept in every statistic)" if possible else "")


def _kinds_decided(study: Study) -> str:
    """Which break-even kinds the jobs decided (wattzip.model.study.Study.kinds): the
    config's metrics for every cell, and the cells a claim reads another metric of."""
    metrics = [m for m in "TE" if m in study.config["verdict"]["kind_metrics"]]
    named: dict[str, list[str]] = {}
    for job in study.jobs(study.first_testbed):
        if job.codec != "plain" and job.file_type != "dutycycle":
            for m in study.kinds(job):
                if m not in metrics and f"{job.codec} on {job.file_type}" not in named.get(m, []):
                    named.setdefault(m, []).append(f"{job.codec} on {job.file_type}")
    out = (f"its break-even kind{'s' * (len(metrics) > 1)} in {' and '.join(metrics)}"
           if metrics else "no break-even kind")
    also = "; ".join(f"in {m} for {', '.join(cells)}" for m, cells in named.items())
    return out + (f" (also {also}, which a claim reads)" if also else "")
