"""What a measurement job's runs came to, said in its log and returned to its caller: the
repeats, the paper rule's target or the look it stopped at, failed and disturbed runs (by
heat too), and a warning for an arm whose runs fall in two groups."""

from __future__ import annotations

from collections.abc import Callable

from wattzip.analysis import cell_summary, stopping
from wattzip.measure.job import MeasurementJob
from wattzip.run_record import count_failed
from wattzip.stats import PAPER_CONFIDENCE, relative_half_width


def summary(job: MeasurementJob, runs: list[dict], log: Callable[[str], None]) -> dict:
    """What the job's runs came to (repeats, the paper rule's target, failures), said in
    its log: the look it stopped at and its verdicts, or the half-widths it missed."""
    shared_plain = job.looks is not None and job.looks.plain_type is not None
    watched = (stopping.VerdictLooks.watched(job.ops) if job.looks and not shared_plain
               else job.ops)
    series = stopping.series(runs, watched, job.repeats.watch)
    repeats_done = min(len(v) for v in series.values())
    widths = {k: relative_half_width(v) for k, v in series.items()}
    met = all(w <= job.repeats.ci_target for w in widths.values())
    if job.looks is not None:
        n = job.looks.runs_per_arm(runs, job.ops)
        if n in job.looks.looks:
            decided = job.looks.decisions(runs, job.ops, n)
            arms_said = (f"{job.codec_name}, against the {job.file_type} plain arm its "
                         f"setting's codecs share, {job.looks.plain_pairs(runs)} pairs so far"
                         if shared_plain else f"plain and {job.codec_name}, interleaved ABBA")
            left = job.looks.open_kinds(runs, job.ops, n)
            log(f"{job.file_type}/{job.codec_name}: stopped at the look of {n} runs per arm "
                f"({arms_said}): "
                + (", ".join(f"{k} {v}" for k, v in decided.items()) or "nothing decided")
                + f"; break-even kinds asked: {', '.join(job.looks.kind_metrics) or 'none'}"
                + "".join(f"; {k}'s break-even kind still open ({' or '.join(v)})"
                          for k, v in left.items()))
        else:
            log(f"{job.file_type}/{job.codec_name}: stopped at {n} verified runs per arm, at "
                f"no planned look ({', '.join(map(str, job.looks.looks))}): see the "
                "failures above")
    elif not met:
        log(f"{job.file_type}/{job.codec_name}: the {PAPER_CONFIDENCE:.0%} half-width target of "
            f"{job.repeats.ci_target:.0%} was not reached after {repeats_done} repeats: "
            + ", ".join(f"{k} {w:.1%}" for k, w in widths.items()))
    for (codec, op), cell in _cells(runs).items():
        if said := cell_summary.two_groups_said(cell):
            log(f"warning: {job.file_type}/{codec} {op}: its runs fall in two groups "
                f"({said}), as a machine switching between speeds gives (a VM's host, a "
                "CPU frequency step): the mean lies between them and describes neither")
    return {"repeats": repeats_done, "ci_met": met, "looked": job.looks is not None,
            "failed": count_failed(runs),
            "disturbed": sum(bool(r.get("disturbed")) for r in runs),
            "heat": sum("heat" in (r.get("disturbed") or "") for r in runs),
            "relative_half_widths": widths,
            # Too few good repeats to describe the job: it failed, whatever was recorded.
            "complete": repeats_done >= job.repeats.min}


def _cells(runs: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """The verified runs by arm (codec or plain) and operation."""
    cells: dict[tuple[str, str], list[dict]] = {}
    for r in runs:
        if r.get("verified"):
            cells.setdefault((r["codec"], r["op"]), []).append(r)
    return cells
