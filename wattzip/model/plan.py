"""How long a study will take on this machine, before it runs.

A short pilot measures each codec's compress and decompress throughput, and the
plain copy's, on a small sample of each input type (cached per testbed, so it
runs once), and extrapolates to the configured file size and repeats: the
repeat rule's minimum gives the expected time, its maximum the upper bound.
Around the measured runs it adds what the pipeline itself spends: input
generation, idle calibration, one verifying decompression per job, cache drops,
job start-up, figures and the PDF.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from wattzip import machine, records
from wattzip.analysis.stopping import RepeatRule
from wattzip.errors import ConfigError, WattzipError
from wattzip.machine import scratch
from wattzip.measure import drift, runner
from wattzip.model.jobs import Job
from wattzip.model.study import Study
from wattzip.workload import codec_registry, corpus, inputs

PILOT_BYTES = 8 << 20
# The pipeline's own costs that the pilot does not see, from the default study's
# breakdown (docs/benchmarks.md): per job, per run, and for the figures and PDF.
JOB_START_S = 0.3
RUN_PREPARE_S = 0.05
REPORT_S_PER_OUTPUT = 0.8


def _timed(argv: list[str], stdin: str, stdout: str | None,
           ok_exit_codes: frozenset[int] = frozenset({0})) -> float:
    """Seconds the command took; a command that fails is an error, not a fast rate."""
    with open(stdin, "rb") as fin, open(stdout or os.devnull, "wb") as fout:
        t0 = time.perf_counter()
        proc = subprocess.run(argv, stdin=fin, stdout=fout, stderr=subprocess.PIPE,
                              check=False)
        if stdout:
            fout.flush()
            os.fsync(fout.fileno())
        elapsed = time.perf_counter() - t0
    if proc.returncode not in ok_exit_codes:
        raise WattzipError(f"plan: the pilot's {shlex.join(argv)} failed (exit "
                           f"{proc.returncode}): {proc.stderr.decode(errors='replace')[:300]}")
    return elapsed


def read_cache(cache: Path) -> dict:
    """The pilot's cache, or {} if there is none; a damaged one is a named error and is
    left as it is (it may hold hours of another pilot's work)."""
    if not cache.exists():
        return {}
    try:
        data = json.loads(cache.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        data = exc
    if not isinstance(data, dict) or not all(
            isinstance(v, int | float | dict) for v in data.values()):
        raise WattzipError(f"plan: the pilot cache {cache} is damaged ({data}"[:300] + "); "
                           "it is left untouched: remove it to measure the pilot again, "
                           "or give another --cache")
    return data


def save_cache(cache: Path, data: dict) -> None:
    """The pilot's cache written whole or not at all (a kill mid-write leaves the last
    one), never through a link at its name."""
    records.write_text_atomically(cache, json.dumps(data, indent=1, sort_keys=True))


def pilot(file_types: list[str], codec_names: list[str], cache: Path, seed: int = 2009,
          progress=None, sources: dict | None = None) -> dict:
    """Seconds per byte of each (file type, codec, operation) and of generating each type;
    measured on PILOT_BYTES samples (a file type read from the user's data: its
    `sources`' first bytes, sample_input) and cached in `cache` (a JSON file)."""
    data = read_cache(cache)
    # On the study's own disk, whose speed it measures; journaled, so a kill leaks none.
    with scratch.folder("wattzip-pilot", str(cache.parent)) as folder:
        _measure_pilot(data, file_types, codec_names, cache, Path(folder), seed, progress,
                       sources or {})
    save_cache(cache, data)
    return data


# The file types read from the user's data (config sources): the pilot cannot make them.
SOURCED = ("user", "silesia")


def sample_input(ftype: str, sample: Path, seed: int, sources: dict) -> int:
    """The pilot's sample of a file type, its size: PILOT_BYTES generated, or of a type
    read from the user's data the first bytes of its source (at most PILOT_BYTES; a
    rate per byte, not the study's input, so not pinned)."""
    if ftype not in SOURCED:
        inputs.generate(ftype, PILOT_BYTES, sample, seed=seed, progress=False)
        return PILOT_BYTES
    source = (sources.get(ftype) or [None])[0]
    if source is None:
        raise ConfigError(f"file type {ftype!r} needs a source (config sources.{ftype}) "
                          "for the plan's pilot too")
    size = min(PILOT_BYTES, corpus.user_data_size(source))
    inputs.generate("user", size, sample, sources=[source], progress=False)
    return size


def _measure_pilot(data: dict, file_types: list[str], codec_names: list[str], cache: Path,
                   work: Path, seed: int, progress, sources: dict) -> None:
    """What `data` lacks, measured in `work`, saved to `cache` after each codec."""
    for ftype in file_types:
        sample = work / f"{ftype}.bin"
        key = f"gen|{ftype}"
        if key not in data:
            t0 = time.perf_counter()
            size = sample_input(ftype, sample, seed, sources)
            data[key] = (time.perf_counter() - t0) / size
        for name in ["plain", *codec_names]:
            key = f"{ftype}|{name}"
            if key in data:
                continue
            if not sample.exists():
                sample_input(ftype, sample, seed, sources)
            if progress:
                progress(f"pilot: {ftype} {name}")
            data[key] = _pilot_codec(sample, name, work)
            save_cache(cache, data)
    if "reference" not in data:  # the drift check's reference operation, once
        path = drift.reference_input(work)
        data["reference"] = _timed(drift.REFERENCE_ARGV, path, None)


def _pilot_codec(sample: Path, name: str, work: Path) -> dict:
    codec = None if name == "plain" else codec_registry.get(name)
    # The codec's own suffix: 7-Zip appends ".7z" to an archive named without it, and its
    # decompression would then find no "out".
    out = work / f"out{codec.suffix if codec else '.raw'}"
    if codec is None or codec.filesystem:  # the plain copy (filesystem codecs: the kernel's)
        argv = runner.plain_copy_argv()
        write = _timed(argv, str(sample), str(out))
        runner.drop_caches([str(out)])
        read = _timed(argv, str(out), None)
    else:
        cargv = codec.compress_argv(str(out), 1)
        write = _timed(cargv, str(sample), None if codec.writes_out_path else str(out),
                       frozenset(codec.ok_exit_codes))
        runner.drop_caches([str(out)])
        dargv = codec.decompress_argv(str(out), 1)
        read = _timed(dargv, os.devnull if codec.reads_in_path else str(out), None,
                      frozenset(codec.ok_exit_codes))
    size = sample.stat().st_size  # PILOT_BYTES, or less of a small corpus (sample_input)
    stored = out.stat().st_size if out.exists() else size
    out.unlink(missing_ok=True)
    return {"write_s_per_byte": write / size, "read_s_per_byte": read / size,
            "stored_per_byte": stored / size}


def throttled_s(seconds: float, moved_bytes: list[float], bytes_per_s: int | None) -> float:
    """An operation behind a budget of `bytes_per_s` for each entry of `moved_bytes` (the
    bytes one budget carries): no faster than its busiest budget lets it (the pilot's
    small files never feel a throttle, so the plan models the cap instead)."""
    if bytes_per_s is None:
        return seconds
    return max([seconds, *(b / bytes_per_s for b in moved_bytes)])


def pair_s(rate: dict, moved: float, bytes_per_s: int | None, one_disk: bool) -> float:
    """A write and its read of `moved` input bytes at the pilot's `rate`, on a disk of
    `bytes_per_s`: on one disk (the input on the medium) the write's input and output
    share one budget; on two, each device has its own. The stored file is read back."""
    stored = rate.get("stored_per_byte", 1.0) * moved  # a cache of an older pilot: 1
    write_budgets = [moved + stored] if one_disk else [moved, stored]
    return (throttled_s(rate["write_s_per_byte"] * moved, write_budgets, bytes_per_s)
            + throttled_s(rate["read_s_per_byte"] * moved, [stored], bytes_per_s))


def cell_seconds(study: Study, rates: dict) -> Callable[[Job], float]:
    """A job's write and read at the pilot's rates, in its setting (inf for a cell the
    pilot did not measure): what wattzip.model.study's measure order sorts by."""
    def seconds(job: Job) -> float:
        rate = rates.get(f"{job.file_type}|{job.codec}")
        if rate is None:
            return math.inf
        setting = study.settings[job.setting]
        return pair_s(rate, study.file_size_bytes * setting.copies,
                      setting.bandwidth_bytes_per_s,
                      setting.medium_spec.get("inputs") == "on-medium")
    return seconds


def cached_cell_seconds(study: Study, testbed: str) -> Callable[[Job], float] | None:
    """cell_seconds from the testbed's cached pilot (`wattzip plan`), None before one."""
    cache = Path(f"{study.root()}/{testbed}/plan/pilot.json")
    return cell_seconds(study, json.loads(cache.read_text())) if cache.exists() else None


@dataclass
class Estimate:
    runs_min: int
    runs_max: int
    measured_min_s: float
    measured_max_s: float
    overhead_min_s: float  # the idle calibration at its first look
    overhead_max_s: float  # every idle window too

    @property
    def wall_min_s(self) -> float:
        return self.measured_min_s + self.overhead_min_s

    @property
    def wall_max_s(self) -> float:
        return self.measured_max_s + self.overhead_max_s


def measured_arms(study: Study, jobs: list[Job]) -> list[tuple[Job, RepeatRule]]:
    """Each arm the jobs measure, at its repeats: the verdict design's plain arm as a plain
    job of as many repeats as its codec's; the moderated design's shared plain arm of a
    setting and file type as one, a pair from each of its K codecs' jobs and as many more
    as the first look needs (K + looks - 1 pairs, at either end of the looks)."""
    out, codecs_of = [], Counter()
    for job in jobs:
        plan = study.repeat_plan(job)
        out.append((job, plan))
        if plan.arms == 2 and study.moderated_design:
            codecs_of[(job.setting, job.file_type)] += 1
        elif plan.arms == 2:
            out.append((replace(job, codec="plain"), plan))
    for (setting, file_type), k in codecs_of.items():
        job = Job(study.first_testbed, setting, file_type, "plain", study.root())
        first = study.repeat_plan(job)
        out.append((job, replace(first, min=k + first.min - 1, max=k + first.max - 1)))
    return out


def estimate(study: Study, rates: dict) -> Estimate:
    """Expected (fewest repeats and idle windows) and longest (most of both) time of the
    study's jobs on its first testbed, each job at its own repeat plan (the paper's rule,
    or the verdict design's looks: a codec's job from the first to the last, with its
    plain arm as measured_arms counts it)."""
    size = study.file_size_bytes
    measured_min = measured_max = verify = 0.0
    runs_min = runs_max = 0
    jobs = study.jobs(study.first_testbed)
    for job, plan in measured_arms(study, jobs):
        copies = study.settings[job.setting].copies
        if job.file_type == "dutycycle":
            duty = study.duty
            r = rates.get(f"{duty.file_type}|{job.codec}", {"write_s_per_byte": 0.0})
            seconds, runs = duty.phases * (r["write_s_per_byte"] * size * copies
                                           + duty.compute_s), 1
        else:
            r = rates[f"{job.file_type}|{job.codec}"]
            setting = study.settings[job.setting]
            bw = setting.bandwidth_bytes_per_s
            one_disk = setting.medium_spec.get("inputs") == "on-medium"
            moved = size * copies
            seconds = pair_s(r, moved, bw, one_disk) + 2 * RUN_PREPARE_S
            runs = 2
            # Verification decompresses once, reading the stored file through the disk.
            verify += throttled_s(r["read_s_per_byte"] * moved, [
                r.get("stored_per_byte", 1.0) * moved], bw)
        measured_min += plan.min * seconds
        measured_max += plan.max * seconds
        runs_min += plan.min * runs
        runs_max += plan.max * runs
    generate = sum(rates[f"gen|{t}"] for t in study.file_types) * size
    # Idle calibration stops at its first look once the interval is narrow enough, else
    # measures every window: the fewest and the most, as the runs.
    window_s = study.config["idle"]["seconds"] * len(study.settings)
    outputs = 4 + 3 * len(study.file_types) + 15  # figures, tables, macros, PDF
    overhead = (generate + drift_check_s(study, rates, len(jobs)) + verify
                + len(jobs) * JOB_START_S + REPORT_S_PER_OUTPUT * outputs)
    return Estimate(runs_min=runs_min, runs_max=runs_max, measured_min_s=measured_min,
                    measured_max_s=measured_max,
                    overhead_min_s=overhead + study.idle_first_look * window_s,
                    overhead_max_s=overhead + study.config["idle"]["count"] * window_s)


def drift_check_s(study: Study, rates: dict, jobs: int) -> float:
    """The drift check's reference operation (wattzip.measure.drift): at both ends of every
    job and in the calibration phases of each state of the machine (settings that differ
    only in medium or bandwidth share them), with the gaps between them; none without the
    check. A job it measures again is not foreseen (docs/statistics.md)."""
    repeats = study.config["drift"]["repeats"]
    if not repeats:
        return 0.0
    states = len({tuple(sorted(s.machine_factors().items()))
                  for s in study.settings.values()})
    return (repeats * rates.get("reference", 0.0) * (2 * jobs + drift.PHASES * states)
            + (drift.PHASES - 1) * drift.PHASE_GAP_S * states)


# The options `wattzip plan` states side by side, in the order it states them.
DESIGNS = ("one pass", "paper", "verdict", "moderated")


def all_designs(study: Study, rates: dict) -> dict[str, Estimate]:
    """The study under each design, side by side: one pass (every cell once, the floor no
    design goes below), the paper's rule, the verdict design and the moderated design."""
    out = {}
    for design in DESIGNS:
        repeats = {**study.config["repeats"], "design": design}
        if design == "one pass":
            repeats.update(design="paper", min=1, max=1)
        config = {**study.config, "repeats": repeats}
        out[design] = estimate(type(study)(config), rates)
    return out


def side_by_side(designs: dict[str, Estimate], chosen: str) -> str:
    """The designs' estimates as lines, the study's own marked."""
    return "\n".join(f"  {'*' if name == chosen else ' '} {name:<10} {describe(est)}"
                      for name, est in designs.items())


def describe(est: Estimate) -> str:
    def hms(s: float) -> str:
        h, rest = divmod(int(round(s)), 3600)
        m, sec = divmod(rest, 60)
        return f"{h}h{m:02d}m" if h else f"{m}m{sec:02d}s"

    runs = f"{est.runs_min}" if est.runs_min == est.runs_max else f"{est.runs_min}-{est.runs_max}"
    # A design that stops on its data reaches its fewest repeats only if every cell is
    # decided at its first chance, and idle calibration its fewest windows only if they
    # agree at its first look: the hours are a floor, and say so.
    varies = " and ".join(what for what, differ in (
        ("repeats", est.runs_min != est.runs_max),
        ("idle windows", est.overhead_max_s - est.overhead_min_s >= 1)) if differ)
    fewest = f" at the fewest {varies}" if varies else ""
    bound = ("" if est.wall_max_s - est.wall_min_s < 1 else
             f", at most {hms(est.wall_max_s)} at the most {varies}")
    return (f"{runs} measured runs: about {hms(est.measured_min_s)} of measurement, "
            f"{hms(est.wall_min_s)} in all on this machine{fewest}{bound}")


def run(study, cache: str | None, out: str | None, lock_wait: float,
        progress=None) -> str:
    """Pilot (cached, under the machine's lock) and estimate the study's first testbed;
    write the estimate's JSON to `out`; return its one-line description."""
    testbed = study.first_testbed
    names = list(dict.fromkeys(study.codecs + [n for n in (study.duty.codecs if study.duty
                                                           else ()) if n != "plain"]))
    cache_path = Path(cache or f"{study.root()}/{testbed}/plan/pilot.json")
    if progress:
        progress(f"plan: pilot on {PILOT_BYTES >> 20} MiB samples, cached in {cache_path} "
                 "(runs once per testbed)")
    with machine.session("plan", testbed, os.getcwd(), wait_s=lock_wait):
        rates = pilot(study.file_types, names, cache_path, study.config["seed"],
                      progress=progress, sources=study.config.get("sources", {}))
    est = estimate(study, rates)
    designs = all_designs(study, rates)
    chosen = study.repeats["design"]
    unmeasured = study.scope.describe()
    text = (f"wattzip study '{study.name}' on testbed '{testbed}': {describe(est)} (design "
            f"{chosen}{'; ' + unmeasured if unmeasured else ''}); the designs side by side, "
            f"on the same cells (* this study's):\n"
            f"{side_by_side(designs, chosen)}")
    if out:
        records.write_text_atomically(out, json.dumps(
            {**vars(est), "wall_min_s": est.wall_min_s, "wall_max_s": est.wall_max_s,
             "text": text, "design": study.repeats["design"],
             "designs": {k: {**vars(v), "wall_min_s": v.wall_min_s,
                             "wall_max_s": v.wall_max_s} for k, v in designs.items()}},
            indent=1) + "\n")
    return text
