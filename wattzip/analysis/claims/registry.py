"""The claims registry: each claim declared in claims.yaml (package data), decided by a
check of its own (registered under its id) or by a shared one its `check:` names.

A check returns holds (True), refuted (False) or not testable (None, with the reason):
a claim whose deciding differences the confidence intervals cannot tell from zero is
not testable, not refuted. No number of the papers is in code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from wattzip.errors import ConfigError
from wattzip.resources import ReferenceDir, load_yaml, reference_file

NO_OVERLAY = "none"  # the overlay of a claim no configuration here can test (its hardware)
ORIGINS = ("paper", "hypothesis")  # a claim's `source`: a seed's statement or the project's


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    section: str
    claim: str
    reference: tuple[str, ...]
    overlay: str
    scope: str  # "setting" or "testbed"
    energy: bool
    parameters: dict = field(hash=False, compare=False, default_factory=dict)
    factor: str = ""  # the factor a testbed-wide claim compares across
    # What the study must have to decide it (wattzip.analysis.claims.scope)
    needs: dict = field(hash=False, compare=False, default_factory=dict)
    # "paper": a statement of the paper; "hypothesis": the project's own, which the seeds
    # do not state; hypothesis_part: the part of a paper's claim that is the project's
    origin: str = "paper"
    hypothesis_part: str = ""
    # another claim the same runs cannot also bear out (the seed's own inconsistency)
    conflicts: dict = field(hash=False, compare=False, default_factory=dict)
    # the check that decides it: a check of its own (its id), or a shared one by name
    check: str = ""

    def __post_init__(self):
        if not self.check:
            object.__setattr__(self, "check", self.id)

    @property
    def source(self) -> str:
        """Where the claim comes from, and where it is the project's own hypothesis, that."""
        where = f"{self.paper} {self.section}"
        if self.origin == "hypothesis":
            return f"{where} (the project's hypothesis)"
        if self.hypothesis_part:
            return f"{where} (the project's hypothesis: {self.hypothesis_part})"
        return where


@dataclass
class Outcome:
    ok: bool | None
    evidence: str = ""
    why: str = ""  # when not testable
    rests_on: list[str] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)
    # The break-even rows (of Evidence.breakeven) it rests on, whatever their setting:
    # the family that claims.familywise holds to the study's confidence (Holm).
    cells: list[dict] = field(default_factory=list)


def kinds_read(claims: list[Claim], file_type: str, codec: str) -> set[str]:
    """The metrics whose break-even kind of (file_type, codec) a claim names in its
    `cells` (a codec or file type list left out names them all; or a list of cells,
    each its file type, codec and metric)."""
    out = set()
    for claim in claims:
        cells = claim.parameters.get("cells") or {}
        if isinstance(cells, list):  # cells named one by one (a break-even value each)
            out |= {c["metric"] for c in cells
                    if (c["file_type"], c["codec"]) == (file_type, codec)}
            continue
        if (cells.get("metric") and file_type in cells.get("file_types", [file_type])
                and codec in cells.get("codecs", [codec])):
            out.add(cells["metric"])
    return out


def load_claims(reference_dir: ReferenceDir | None = None) -> list[Claim]:
    """Every declared claim (the package's claims.yaml unless another folder is named); each
    must have a check here, and each check a declaration."""
    entries = load_yaml(reference_file("claims.yaml", reference_dir).read_text(
        encoding="utf-8"))
    bad = [e["id"] for e in entries if e.get("source", "paper") not in ORIGINS]
    if bad:
        raise ConfigError(f"claims.yaml: the source of {bad} is none of {ORIGINS}")
    claims = [Claim(id=e["id"], paper=e["paper"], section=str(e["section"]),
                    claim=e["claim"], reference=tuple(e.get("reference") or ()),
                    overlay=e["overlay"], scope=e["scope"], energy=bool(e["energy"]),
                    parameters=e.get("parameters") or {}, factor=e.get("factor", ""),
                    needs=e.get("needs") or {}, origin=e.get("source", "paper"),
                    hypothesis_part=e.get("hypothesis_part", ""),
                    conflicts=e.get("conflicts") or {}, check=e.get("check", ""))
              for e in entries]
    named = {c.check for c in claims}
    if named != set(CHECKS):
        raise ConfigError(f"claims.yaml and wattzip/analysis/claims/ disagree: checks named "
                          f"that are not there {sorted(named - set(CHECKS))}, checks no claim "
                          f"names {sorted(set(CHECKS) - named)}")
    return claims


CHECKS: dict[str, Callable[[Claim, Evidence], Outcome]] = {}  # noqa: F821 (evidence.py)


def check(claim_id: str):
    def register(fn):
        CHECKS[claim_id] = fn
        return fn
    return register
