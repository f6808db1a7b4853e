"""A measurement job (a codec, or plain, on one file type in one setting), where its
outputs live, and its repeats."""

from __future__ import annotations

from dataclasses import dataclass

# Where a study's measured outputs and its rehearsal's simulated ones live: two trees
# that never share a file (results/<study>/<testbed>/..., rehearsal/<study>/<testbed>/...).
STAGES = ("results", "rehearsal")


RESULTS = "results"


@dataclass(frozen=True)
class Job:
    """One measurement job: a codec (or plain) on one file type in one setting."""

    testbed: str
    setting: str
    file_type: str  # "dutycycle" for the duty-cycle workload
    codec: str
    root: str = f"{RESULTS}/default"  # the study's tree of this stage (Study.root)

    @property
    def stem(self) -> str:
        return f"{self.testbed}/{{kind}}/{self.setting}/{self.file_type}/{self.codec}"

    def path(self, kind: str, suffix: str = ".jsonl") -> str:
        return f"{self.root}/{self.stem.format(kind=kind)}{suffix}"


@dataclass(frozen=True)
class RepeatPlan:
    """One job's repeats: the paper's rule between min and max, or the verdict design's
    looks (min the first, max the last), where a codec's job measures a plain arm beside
    the codec's: its own, as many repeats of each, or under the moderated design pairs of
    its setting and file type's shared one (wattzip.model.plan.measured_arms counts them).
    Its looks stop once the cell's T and E verdicts and the break-even kinds of `kinds`
    are decided."""

    min: int
    max: int
    ci_target: float
    watch: tuple[str, ...]  # what the paper's rule watches (repeats.watch)
    looks: tuple[int, ...] = ()
    kinds: tuple[str, ...] = ()  # the metrics whose break-even kind the looks must decide

    @property
    def arms(self) -> int:
        """The arms a job measures, each a write and a read: the codec's (or plain's), and
        under the verdict design a plain arm too."""
        return 2 if self.looks else 1
