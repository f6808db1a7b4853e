"""A measurement job (a codec, or plain, on one file type in one setting), and where its
outputs live (its repeats: wattzip.analysis.stopping.RepeatRule)."""

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
