"""When a measurement job has measured enough.

Two designs (config `repeats.design`):

- paper: SYSTOR '09's rule. At least `min` repeats, then more until every 95%
  half-width of what it watches (`watch`: T, E and ET by default; the paper's elapsed,
  user, system and wait times in config/paper.yaml) is under `ci_target` of its mean,
  at most `max`. The
  way to reproduce the paper, though looking after every run erodes the coverage
  the intervals claim.
- verdict: planned looks (say n = 3, 5, 8 runs per arm). A codec's job measures its
  own plain arm beside the codec's, interleaved ABBA (wattzip.measure.repeats), and stops at
  the first look where the verdicts of its cell (T, and E where there is a meter) and
  the break-even kinds the study asks of it (`kind_metrics`: the claims rest on them,
  wattzip.analysis.breakeven) are all decided, each look at alpha / looks
  (Bonferroni, wattzip.analysis.verdicts), so coverage holds whichever look it stops
  at. The verdicts compare the codec arm's first n runs with the first n of its own
  plain arm.
- moderated: the verdict design's looks from 2 runs, each arm's variance moderated
  (wattzip.analysis.moderated), and one plain arm per setting and file type: each codec's
  job adds a plain pair to it (more only while it holds fewer runs than the look
  needs), and its looks compare the codec's first n runs with that shared arm's last
  n pairs so far, the nearest in time (a slow drift falls on both alike).

Either way an outlier (modified Z > 3.5 among an operation's verified runs of the
job) keeps a job that would stop going: one more repeat under the paper's rule (at
most `max`), on to the next planned look under the verdict design (at most the
last: a later planned look keeps the alpha / looks coverage, where replacing or
dropping the run would not). The outlier stays in the runs and in every statistic.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields

from wattzip.analysis import breakeven, moderated, uncertainty, verdicts
from wattzip.analysis.analysis_options import AnalysisOptions, pair_confidence
from wattzip.analysis.cell_summary import METRICS as PER_RUN
from wattzip.analysis.cell_summary import NEEDS_ENERGY, WATCHABLE, has_metric
from wattzip.resources import operations_where, schema_default
from wattzip.stats import OUTLIER_MIN_RUNS, OUTLIER_Z, modified_z, need_more_repeats

PLAIN_OPS = operations_where(region="io", arm="plain")
# The codec's own I/O operations: the looks compare them with the plain arm's; the
# codec-only operations measured beside them (data/operations.csv) are no arm of a look.
CODEC_IO_OPS = operations_where(region="io", arm="codec")
# The metrics whose verdicts and break-even kinds the looks judge, and their runs' field.
METRICS = {"T": "elapsed_s", "E": "energy_j"}


def series(runs: list[dict], ops: Sequence[str], watch: Sequence[str]) -> dict[str, list[float]]:
    """What the paper's rule watches (`watch`, repeats.watch's names) of each operation,
    over the verified runs: energy and ET only where a meter gave energy, and a time
    only where every run has it (wait is undefined for a run that used more CPU time
    than wall time, several CPUs at once), so that no series is short of the runs."""
    good = [r for r in runs if r.get("verified")]
    out = {}
    for op in ops:
        mine = [r for r in good if r["op"] == op]
        for name in watch:
            stem = WATCHABLE[name]
            has = [has_metric(r, stem) for r in mine]
            if not mine or (any(has) if name in NEEDS_ENERGY else all(has)):
                out[f"{op} {name}"] = [PER_RUN[stem](r) for r in mine if has_metric(r, stem)]
    return out


def last_runs(runs: list[dict], op: str, n: int) -> list[dict]:
    """The last n verified runs of an operation in time: a shared plain arm's pairs
    nearest the codec's, so a slow drift of the machine falls on both alike."""
    return sorted((r for r in runs if r.get("verified") and r["op"] == op),
                  key=lambda r: r.get("started_at") or "")[-n:]


def first_runs(runs: list[dict], op: str | None, n: int | None) -> list[dict]:
    """The first n verified runs of an operation (every run's, for None), in repeat
    order (all of them, for n None)."""
    return sorted((r for r in runs if r.get("verified") and op in (None, r["op"])),
                  key=lambda r: r["repeat"])[:n]


@dataclass(frozen=True)
class Outlier:
    """One verified run whose T or E (or both) lies far from its operation's other runs."""

    op: str
    repeat: int
    scores: tuple[tuple[str, float, float], ...]  # ("T" or "E", value, modified Z)
    estimated: bool = False  # its E comes from the estimated model, and says so

    def describe(self) -> str:
        def value(metric: str, x: float) -> str:
            if metric == "T":
                return f"{x:.4g} s"
            return f"{'ESTIMATED ' if self.estimated else ''}{x:.4g} J"

        said = "; ".join(f"{metric} {value(metric, x)}, modified Z {z:+.1f}"
                         for metric, x, z in self.scores)
        return f"r{self.repeat} {self.op} is an outlier ({said})"


def outliers(runs: list[dict], ops: Sequence[str]) -> list[Outlier]:
    """The runs whose T or E has a modified Z above 3.5 among the verified runs of their
    operation (the analysis's rule, wattzip.stats.modified_z; at least OUTLIER_MIN_RUNS)."""
    out = []
    for op in ops:
        scores: dict[int, list] = {}
        estimated = any(r.get("meter_method") == "estimated" for r in runs if r["op"] == op)
        for metric, key in METRICS.items():
            mine = [r for r in first_runs(runs, op, None) if r.get(key) is not None]
            if len(mine) < OUTLIER_MIN_RUNS:
                continue
            for r, z in zip(mine, modified_z([r[key] for r in mine]), strict=True):
                if abs(z) > OUTLIER_Z:
                    scores.setdefault(r["repeat"], []).append((metric, r[key], z))
        out += [Outlier(op, repeat, tuple(s), estimated) for repeat, s in sorted(scores.items())]
    return out


def _codec_of(runs: list[dict], ops: Sequence[str]) -> str | None:
    """The codec a job's runs of its codec operations name (its arms' group)."""
    return next((r.get("codec") for r in runs if r.get("op") in ops), None)


def _values(arms: tuple, metric: str) -> tuple:
    """Each arm's runs as their values of the metric."""
    return tuple([x[metric] for x in arm] for arm in arms)


@dataclass(frozen=True)
class VerdictLooks:
    """The verdict design's stopping rule for one codec's job, its plain arm its own."""

    looks: tuple[int, ...]
    # The study's decisions, the report's own (margin, workload, confidence; its `looks`
    # the number of these looks): a job stops where the report decides. Under
    # options.moderated (wattzip.analysis.moderated) each arm's variance is shrunk toward
    # a prior fitted over this job's arms and those of `prior_runs`, the runs of the
    # study's other cells in the same setting measured so far.
    options: AnalysisOptions
    prior_runs: tuple[dict, ...] = field(default=(), repr=False, compare=False)
    # The moderated design's one plain arm per setting and file type: the file type whose
    # shared plain runs (this job's and those in `prior_runs`) the looks compare with;
    # None: the job's own plain arm.
    plain_type: str | None = None
    # The metrics whose break-even kind a look must decide before the job stops (the
    # study's: wattzip.model.study.Study.kinds); by default every metric it judges.
    kind_metrics: tuple[str, ...] = tuple(METRICS)

    def __post_init__(self):
        if self.options.looks != len(self.looks):
            raise ValueError(f"looks {self.looks} under options of {self.options.looks} "
                             "planned looks: each look's level is alpha / their number")
        unknown = [m for m in self.kind_metrics if m not in METRICS]
        if unknown:
            raise ValueError(f"break-even kinds of {unknown}: the looks judge "
                             f"{', '.join(METRICS)}")

    def plain_pool(self, runs: list[dict]) -> list[dict]:
        """The plain runs the looks compare with: the job's own, and under a shared plain
        arm those of its file type that other jobs measured before it."""
        own = [r for r in runs if r.get("op") in PLAIN_OPS]
        if self.plain_type is None:
            return own
        return [*(r for r in self.prior_runs if r.get("op") in PLAIN_OPS
                  and r.get("file_type") == self.plain_type), *own]

    def plain_pairs(self, runs: list[dict]) -> int:
        """Verified pairs (write and read) of the plain arm the looks compare with."""
        pool = self.plain_pool(runs)
        return min(len(first_runs(pool, op, None)) for op in PLAIN_OPS)

    @staticmethod
    def watched(ops: Sequence[str]) -> tuple[str, ...]:
        """The job's four operations: its plain arm's, then the codec's."""
        return (*PLAIN_OPS, *ops)

    def runs_per_arm(self, runs: list[dict], ops: Sequence[str]) -> int:
        """Verified runs of the job's scarcest operation (a look needs n of each); a
        shared plain arm counts all of its runs so far."""
        codec = [len(first_runs(runs, op, None)) for op in ops]
        return min([*codec, self.plain_pairs(runs)], default=0)

    def arm_runs(self, runs: list[dict], ops: Sequence[str], metric: str, n: int) -> tuple:
        """(w, c, r, d): each operation's first n runs in this job that have the metric
        (of a shared plain arm, its last n so far)."""
        pool = self.plain_pool(runs)

        def picked(op):
            if op in PLAIN_OPS and self.plain_type:
                chosen = last_runs(pool, op, n)
            else:
                chosen = first_runs(pool if op in PLAIN_OPS else runs, op, n)
            return [x for x in chosen if x.get(metric) is not None]

        return (picked(PLAIN_OPS[0]), picked(ops[0]), picked(PLAIN_OPS[1]), picked(ops[1]))

    def arms(self, runs: list[dict], ops: Sequence[str], metric: str, n: int) -> tuple:
        """(w, c, r, d) of a metric: the values of arm_runs."""
        return _values(self.arm_runs(runs, ops, metric, n), metric)

    def look_confidence(self, n: int) -> float:
        """Look n's level: 1 - alpha / looks at each planned look (Bonferroni over the
        looks), so a verdict holds at options.confidence whichever look stopped the job."""
        return self.options.look_confidence

    def decisions(self, runs: list[dict], ops: Sequence[str], n: int) -> dict[str, str]:
        """Each metric's verdict at look n (T always, E where the runs have energy), on
        the combined interval: energy's Type B terms (wattzip.analysis.uncertainty) widen
        it here as they do in the analysis, so the job stops where the report decides."""
        each = self.look_confidence(n)
        k, margin = self.options.reads_per_write, self.options.margin
        out = {}
        for name, metric in METRICS.items():
            picked = self.arm_runs(runs, ops, metric, n)
            arms = _values(picked, metric)
            if min(map(len, arms)) < n:
                continue  # no meter (E), or too few runs: not decided here
            w, c, r, d = picked
            type_b = uncertainty.type_b_variance([(1, w), (k, r), (-1, c), (-k, d)], metric)
            if self.options.moderated:
                priors = self.priors(arms, ops, metric, _codec_of(runs, ops))
                out[name] = moderated.decide(*arms, priors, reads_per_write=k, margin=margin,
                                             confidence=each, type_b_var=type_b).verdict
            else:
                out[name] = verdicts.decide(*arms, reads_per_write=k, margin=margin,
                                            confidence=each, type_b_var=type_b).verdict
        return out

    def open_kinds(self, runs: list[dict], ops: Sequence[str], n: int) -> dict[str, list[str]]:
        """The break-even kinds (wattzip.analysis.breakeven) that look n leaves possible, of each
        metric whose kind it leaves open: the claims rest on these kinds, so a job measures
        on while one is open, as it does while a verdict is undecided. Its rectangle is the
        analysis's: each difference at half the look's alpha, the verdict's priors."""
        each = pair_confidence(self.look_confidence(n))
        out = {}
        for name in self.kind_metrics:
            metric = METRICS[name]
            picked = self.arm_runs(runs, ops, metric, n)
            if min(map(len, picked)) < n:
                continue  # no meter (E), or too few runs: nothing to decide here
            priors = (self.priors(_values(picked, metric), ops, metric, _codec_of(runs, ops))
                      if self.options.moderated else None)
            arms = dict(zip("wcrd", picked, strict=True))
            left = breakeven.open_kinds(*breakeven.differences(
                arms, metric, lambda r, m=metric: r[m], each, priors))
            if left:
                out[name] = left
        return out

    def priors(self, arms: tuple, ops: Sequence[str], metric: str, codec: str | None
               ) -> dict:
        """The moderated design's prior of each of this job's arms (w, c, r, d) for a
        metric (wattzip.analysis.moderated.cell_priors): over its four arms at the look
        and every arm (job and operation) of the other cells' runs, a codec's arms judged
        with its own; a shared plain arm is one arm per file type (its own file type's is
        among this job's four)."""
        others = defaultdict(list)
        for r in self.prior_runs:
            if (not r.get("verified") or r.get(metric) is None
                    or r["op"] not in (*PLAIN_OPS, *CODEC_IO_OPS)):
                continue
            if r["op"] in PLAIN_OPS:
                if self.plain_type is None:
                    others[(r.get("job_key"), "plain", r["op"])].append(r[metric])
                elif r.get("file_type") != self.plain_type:
                    others[(r.get("file_type"), "plain", r["op"])].append(r[metric])
            else:
                others[(r.get("job_key"), r.get("codec"), r["op"])].append(r[metric])
        own = {k: (op, v, group) for k, op, v, group in zip(
            "wcrd", (PLAIN_OPS[0], ops[0], PLAIN_OPS[1], ops[1]), arms,
            ("plain", codec, "plain", codec), strict=True)}
        return moderated.cell_priors(own, [(k[2], v, k[1]) for k, v in others.items()])

    def needs_more(self, runs: list[dict], ops: Sequence[str]) -> bool:
        """The looks alone (wattzip.analysis.stopping.needs_more adds the outliers)."""
        n = self.runs_per_arm(runs, ops)
        if n < self.looks[0]:
            return True
        if n >= self.looks[-1]:
            return False
        if n not in self.looks:
            return True  # between two looks (a resumed job, an outlier): on to the next
        decided = self.decisions(runs, ops, n)
        return (not decided or verdicts.UNDECIDED in decided.values()
                or bool(self.open_kinds(runs, ops, n)))


@dataclass(frozen=True)
class RepeatRule:
    """One job's repeats (config `repeats:`): the paper's rule, at least `min` runs of each
    operation and more until every half-width of what it watches is under `ci_target` of
    its mean, at most `max`; or the verdict design's planned `looks` (runs per arm: the
    first and the last are its min and max), where a codec's job measures a plain arm
    beside the codec's: its own, as many repeats of each, or under the moderated design
    pairs of its setting and file type's shared one (wattzip.model.plan.measured_arms
    counts them), and stops once the cell's T and E verdicts and the break-even kinds of
    `kinds` are decided. The other fields are named as `repeats:`'s keys, and each key
    reaches its field (`of`). The study model plans it for each job (Study.repeat_plan),
    which the job reads from its spec (wattzip.measure.spec.repeats)."""

    min: int
    max: int
    ci_target: float
    watch: tuple[str, ...] = tuple(schema_default("repeats.watch"))  # the paper's rule's
    looks: tuple[int, ...] = ()
    kinds: tuple[str, ...] = ()  # the metrics whose break-even kind the looks must decide

    def __post_init__(self):
        for name in ("watch", "looks", "kinds"):  # as a config or a spec gives them: lists
            object.__setattr__(self, name, tuple(getattr(self, name)))

    @classmethod
    def of(cls, repeats: Mapping, looks: Sequence[int] = (),
           kinds: Sequence[str] = ()) -> RepeatRule:
        """The rule of a `repeats:` section whole, each of its keys that names a field
        in that field, for a job that looks at `looks` and decides `kinds` (none: the
        paper's rule)."""
        keys = {f.name for f in fields(cls)} - {"looks", "kinds"}  # a job's own, derived
        given = {k: v for k, v in repeats.items() if k in keys}
        if looks:
            given.update(min=looks[0], max=looks[-1])
        return cls(**given, looks=looks, kinds=kinds)

    @property
    def arms(self) -> int:
        """The arms a job measures, each a write and a read: the codec's (or plain's), and
        under the verdict design a plain arm too."""
        return 2 if self.looks else 1


def repeat_cap(max_repeats: int, runs: list[dict]) -> int:
    """The last repeat a job may start: twice its most (failed runs are made up for), and
    one more for each repeat a disturbance cost, up to twice its most again, so that a
    few runs the hypervisor stole from do not leave a short job without its repeats."""
    disturbed = len({r["repeat"] for r in runs if r.get("disturbed")})
    return 2 * max_repeats + min(disturbed, 2 * max_repeats)


def needs_more(runs: list[dict], ops: Sequence[str], rule: RepeatRule,
               looks: VerdictLooks | None = None,
               log: Callable[[str], None] | None = None) -> bool:
    """Whether the job measures another repeat: the verdict design's looks for a codec
    under that design, else the paper's rule (`rule`); and where that rule would stop, an
    outlier first seen there keeps it going once (one more repeat, or on to the next
    look), never past its last allowed repeat or look: each outlier costs one extension,
    not a run to the maximum. `log` hears which run was an outlier and what the job did."""
    if looks is not None:
        if looks.needs_more(runs, ops):
            return True
        watched = looks.watched(ops)
        n = looks.runs_per_arm(runs, ops)
        last = n >= looks.looks[-1]
        since = max((k for k in looks.looks if k < n), default=0)  # the previous look
        onward, final = "on to the next planned look", f"the last look ({looks.looks[-1]})"
    else:
        measured = series(runs, ops, rule.watch)
        if need_more_repeats(measured, rule.min, rule.max, rule.ci_target):
            return True
        watched = tuple(ops)
        n = min((len(v) for v in measured.values()), default=0)
        last = n >= rule.max
        since = n - 1 if n > rule.min else 0  # the previous point the rule stopped at
        onward, final = "one more repeat", f"the most repeats ({rule.max})"
    seen = {(o.op, o.repeat) for o in outliers([r for r in runs if r["repeat"] <= since],
                                                watched)} if since else set()
    flagged = outliers(runs, watched)
    new = [o for o in flagged if (o.op, o.repeat) not in seen]
    for outlier in flagged if log else ():
        if outlier in new and not last:
            log(f"{outlier.describe()}: measuring {onward} because of it (the run stays "
                "in the data)")
        else:
            log(f"{outlier.describe()}: it stays, flagged and counted in every statistic, "
                "never dropped" + (f", at {final}" if last else
                                   " (it kept the job going once already)"))
    return bool(new) and not last
