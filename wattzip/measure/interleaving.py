"""A job's arms and the order of each repeat's: the codec's alone (the paper's rule), with
its own plain arm in ABBA order (the verdict design), or with pairs of its setting and
file type's one shared plain arm (the moderated design)."""

from __future__ import annotations

import copy
import dataclasses

from wattzip.measure.job import MeasurementJob


def plain_arm(job: MeasurementJob) -> MeasurementJob:
    """The verdict design's plain arm of a codec's job: a MeasurementJob of its own (its own stored
    file, wattzip-<type>-plain.raw, its own verification) on the same medium, inputs,
    meter, factors and repeats. A filesystem's compression is the codec's mount option:
    the plain arm's medium mounts without it, as the paper design's plain job's does."""
    medium = job.medium
    if job.codec.mount_option:
        medium = copy.copy(job.medium)  # the same attached image and mount point
        medium.mount_options = ",".join(o for o in job.medium.mount_options.split(",")
                                        if o and o != job.codec.mount_option)
    return dataclasses.replace(job, codec=None, medium=medium, looks=None, verification="",
                               _verified_digests=set())


def abba(arms: list[MeasurementJob], repeat: int) -> list[MeasurementJob]:
    """The arms of a repeat: odd repeats in the given order, even ones reversed (with two
    arms P and C: P C, C P, P C, ...), so that a drift over time falls on each alike."""
    return arms if repeat % 2 else arms[::-1]


def repeat_arms(job: MeasurementJob, arms: list[MeasurementJob], repeat: int,
                runs: list[dict]) -> list[MeasurementJob]:
    """The arms a repeat measures, in order: both, ABBA (abba), or under a shared plain
    arm (the moderated design) the codec's, with a plain pair in the job's first repeat
    and in any repeat that finds the shared arm with fewer pairs than the repeat, so that
    every look finds as many; plain first when the shared arm holds an even number of
    pairs, last when odd, so that its pairs alternate through the study's order. Decided
    from the runs of earlier repeats, so a resumed repeat gets the same arms."""
    looks = job.looks
    if looks is None or looks.plain_type is None or len(arms) < 2:
        return abba(arms, repeat)
    plain, codec = arms
    return with_shared_plain(plain, codec,
                             looks.plain_pairs([r for r in runs if r["repeat"] < repeat]),
                             repeat)


def with_shared_plain(plain, codec, pairs: int, repeat: int) -> list:
    """A repeat's arms beside a shared plain arm that holds `pairs` pairs before it: the
    codec's alone, or with a plain pair (in the job's first repeat, and while the arm is
    shorter than the repeat), plain first when `pairs` is even. The one rule the jobs,
    the rehearsal and the coverage benchmark follow."""
    if repeat > 1 and pairs >= repeat:
        return [codec]
    return [plain, codec] if pairs % 2 == 0 else [codec, plain]


def pairing(job: MeasurementJob, arm: MeasurementJob) -> dict:
    """What a run of `arm` records of the job it belongs to: a plain arm names the codec
    it is paired with (runs.csv's paired_with), or under a shared plain arm the codec
    whose job measured it (shared_plain_of)."""
    if arm is job:
        return {}
    if job.looks is not None and job.looks.plain_type is not None:
        return {"shared_plain_of": job.codec_name}
    return {"paired_with": job.codec_name}
