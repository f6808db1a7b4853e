"""The repeat design in a sentence, for the report (its \\RepeatDesign): the paper's
rule, the verdict design or the moderated design, with what each job stopped on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wattzip.analysis import moderated

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
