"""The repeat design in a sentence, for the report (its \\RepeatDesign): the paper's
rule, the verdict design or the moderated design, with what each job stopped on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wattzip.analysis import moderated
from wattzip.measure import drift

if TYPE_CHECKING:
    from wattzip.model.study import Study


def describe(study: Study) -> str:
    """The study's repeat design as the report states it."""
    rep = study.repeats
    if not study.verdict_design:
        return (f"the paper's rule: at least {rep['min']} and at most {rep['max']} runs "
                "per operation, more until each 95% half-width of T, E and ET was under "
                f"{100 * rep['ci_target']:g}% of its mean, and one more for each run newly "
                "found an outlier (modified Z > 3.5; kept in every statistic)")
    looks = study.looks
    stop = ("stopped at the first look that decided its T and E verdicts and "
            f"{_kinds_decided(study)}, going on to the next look for a run newly found an "
            "outlier (modified Z > 3.5; kept in every statistic)")
    if study.moderated_design:
        return (f"the moderated design: planned looks at {', '.join(map(str, looks))} "
                f"runs per arm, each at alpha / {len(looks)} (Bonferroni, 95% overall), "
                "each arm's variance moderated by an empirical-Bayes prior fitted over "
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
            f"arm, each at alpha / {len(looks)} (Bonferroni, 95% overall); each codec's "
            "job measured its own plain arm, interleaved with the codec's in ABBA order "
            "(plain, codec; codec, plain; ...) against drift, and " + stop)


def drift_check(study: Study) -> str:
    """The drift check as the report states it: a job measured again is part of the design,
    and a testbed whose speed switches levels within seconds flags often (docs/statistics.md)."""
    check = study.config["drift"]
    if not check["repeats"]:
        return "No drift check: the machine's drift over a job was not measured (drift.repeats 0)."
    return (f"Each job was measured again, once, when a fixed reference operation "
            f"({' '.join(drift.REFERENCE_ARGV[:2])} of a fixed text of "
            f"{drift.REFERENCE_BYTES >> 20} MiB in the page cache), run {check['repeats']} "
            "times before the job's first run and after its last, changed in time or "
            "energy beyond the reference's noise (a 95% interval from the spread of its "
            f"means over {drift.PHASES} such phases {drift.PHASE_GAP_S:g} s apart at each "
            "setting's idle calibration, pooled with the changes between one job's last "
            "phase and the next job's first, seconds apart, in the same setting before the "
            "job; where a calibration held no phases, as an idle "
            "power given by hand, Welch's interval of the two ends' repeats) and by more than "
            f"{100 * check['max_change']:g}% (the drift check); the runs it measured again "
            "enter no statistic, and those of a job that drifted again are kept, marked "
            "drift_warning.")


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
