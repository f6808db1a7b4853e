"""The analysis's decisions in one object, carried to every call that decides something.

The margin, the workload (reads per write), the planned looks, the confidence and the
repeat rule's target were keyword arguments with defaults in each function, so a caller
that forgot one (the model-robustness re-decision did) decided a cell by other rules
than the study's. Every entry point and inner decision now requires them (no default
instance, no defaults of their own), so a forgotten option is a TypeError rather than
another rule. Every level the report states is computed here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from wattzip.resources import schema_default
from wattzip.stats import PAPER_CI_TARGET, PAPER_CONFIDENCE


@dataclass(frozen=True)
class AnalysisOptions:
    confidence: float = PAPER_CONFIDENCE  # overall, 1 - alpha; the summary's half-widths too
    # A verdict's negligible band (a share of its baseline) and the workload it is about:
    # the schema's defaults, as the command line's.
    margin: float = schema_default("verdict.margin")
    reads_per_write: float = float(schema_default("verdict.reads_per_write"))
    looks: int = 0  # the verdict design's planned looks (0: the paper's design)
    ci_target: float = PAPER_CI_TARGET  # the repeat rule's half-width, a share of the mean
    # What the repeat rule watched (repeats.watch): summary.csv's ci_met is of these.
    watch: tuple[str, ...] = tuple(schema_default("repeats.watch"))
    # The smallest saving worth reporting, a share of the baseline: an undecided verdict
    # says whether it could have seen one (wattzip.analysis.power).
    effect: float = schema_default("verdict.effect")
    # The moderated design: each verdict's arms moderated by the priors its job fitted
    # over the study's cells (wattzip.analysis.moderated); with `looks` (its planned looks).
    moderated: bool = False

    @classmethod
    def of_study(cls, repeats: Mapping, verdict: Mapping | None = None) -> AnalysisOptions:
        """The options of a study's config sections `repeats` and `verdict`."""
        verdict = verdict or {}
        design = repeats.get("design", "paper")
        looks = repeats.get("moderated_looks" if design == "moderated" else "looks") or ()
        return cls(margin=float(verdict.get("margin", cls.margin)),
                   reads_per_write=float(verdict.get("reads_per_write", cls.reads_per_write)),
                   looks=len(looks) if design in ("verdict", "moderated") else 0,
                   moderated=design == "moderated",
                   ci_target=float(repeats.get("ci_target", cls.ci_target)),
                   watch=tuple(repeats.get("watch", cls.watch)),
                   effect=float(verdict.get("effect", cls.effect)))

    def flags(self) -> str:
        """The flags of `wattzip analyze` and `wattzip claims` that decide as these do."""
        return (f"--margin {self.margin:g} --reads-per-write {self.reads_per_write:g} "
                f"--looks {self.looks} --ci-target {self.ci_target:g} "
                f"--watch {','.join(self.watch)} "
                f"--effect {self.effect:g}" + (" --moderated" if self.moderated else ""))

    @property
    def alpha(self) -> float:
        return 1 - self.confidence

    @property
    def look_confidence(self) -> float:
        """Each look's level: 1 - alpha / looks under the verdict design (Bonferroni over
        the planned looks), so a verdict holds at `confidence` whichever look stopped."""
        return 1 - self.alpha / self.looks if self.looks else self.confidence

    @property
    def difference_confidence(self) -> float:
        return pair_confidence(self.look_confidence)


def pair_confidence(level: float) -> float:
    """Each of a break-even cell's two differences (d_w, d_r): half the level's alpha, so
    that both hold together at `level` (a look's, under planned looks)."""
    return 1 - (1 - level) / 2


def percent(level: float) -> str:
    """A confidence level as the text states it: 97.5, 99.17 (four significant digits)."""
    return f"{100 * level:.4g}"


def breakeven_levels(options: AnalysisOptions) -> str:
    """The levels of a break-even cell's intervals, as the text and the table's note state
    them: each difference's, both together's, and the looks' share of alpha."""
    text = (f"each at {percent(options.difference_confidence)}%, so both hold together at "
            f"{percent(options.look_confidence)}%")
    if options.looks:
        text += (f", alpha / {options.looks} at each of the {options.looks} planned looks: "
                 f"{percent(options.confidence)}% over all")
    return text
