"""What a claim needs to be decided at all: its scope, declared in claims.yaml (`needs`).

A statement of a paper holds for what the paper measured: its tools, the factor values it
was read from, its workload. A study lacking one of them cannot decide the claim, and
says so with what would test it ("not testable here"), instead of deciding it on other
tools, on a subset of a sweep or on another workload. The keys of `needs`:

- `paper_codecs`: the reference tables whose codecs are the tools the paper ran. A "no
  tool" or "every tool" claim is decided on these alone; other measured codecs are named
  beside the evidence and decide nothing.
- `levels`: {tool, levels, file_types}: the sweep of levels the statement was read from;
  every level must have been measured on every file type.
- `workload`: {factor, value, what}: the setting factor (a FACTOR_COLUMNS column) and its
  value that make the paper's workload here (SYSTOR '11: 20 copies at once); every
  setting the claim reads must have it.
- `factor_values`: {factor, values, what}: the values of a setting factor (a
  FACTOR_COLUMNS column) the statement was read from (the highest and the lowest CPU
  frequency; SYSTOR '11's three media), each a value or a list of alternatives (the
  highest frequency: pinned, or the performance governor): each must be a setting's,
  every other factor the primary setting's (evidence.factor_settings).
- `filesystem`: the filesystem codecs the statement was read from (HPC '14's ZFS): the
  codecs the claim names must compress inside the filesystem, not as user-space tools.
"""

from __future__ import annotations

from wattzip.analysis.claims.evidence import (
    Evidence,
    factor_settings,
    first_measured,
    shown_value,
)
from wattzip.analysis.claims.registry import Claim, Outcome
from wattzip.errors import ConfigError
from wattzip.workload import codec_registry


def in_filesystem(codec: str) -> bool:
    """Whether a codec compresses inside the filesystem (the codec registry's)."""
    try:
        return bool(codec_registry.get(codec).filesystem)
    except (ConfigError, KeyError, ValueError):
        return False


def paper_codecs(claim: Claim, ev: Evidence) -> frozenset[str] | None:
    """The codecs of the paper's table the claim is about (None: no such restriction)."""
    tables = claim.needs.get("paper_codecs")
    if not tables:
        return None
    tables = [tables] if isinstance(tables, str) else tables
    return frozenset(row["codec"] for table in tables for row in ev.reference(table))


def _not_testable(why: str, test: str) -> Outcome:
    return Outcome(None, "", why=f"{why}; {test} would test it")


def _missing_levels(claim: Claim, ev: Evidence) -> list[str]:
    need = claim.needs["levels"]
    tool, levels = need["tool"], [int(lv) for lv in need["levels"]]
    missing = []
    for file_type in need.get("file_types") or ev.file_types():
        have = {int(c.partition("-")[2]) for c in ev.codecs()
                if c.partition("-")[0] == tool and c.partition("-")[2].isdigit()
                and ev.summary_row(file_type, c, "compress-write")}
        lacking = [lv for lv in levels if lv not in have]
        if lacking:
            missing.append(f"{tool}-{','.join(map(str, lacking))} on {file_type}")
    return missing


def _settings_read(ev: Evidence) -> list[str]:
    return [ev.setting] if ev.setting else ev.settings


def _workload_missing(claim: Claim, ev: Evidence) -> bool:
    need = claim.needs["workload"]
    info = ev.setting_factors
    return not _settings_read(ev) or any(
        str(info.get(s, {}).get(need["factor"])) != str(need["value"])
        for s in _settings_read(ev))


def _not_in_filesystem(claim: Claim, ev: Evidence, is_filesystem) -> list[str]:
    codecs = claim.parameters.get("codecs") or {}
    named = list(codecs.values() if isinstance(codecs, dict) else codecs)
    named += [item["codec"] for item in claim.parameters.get("ratios", [])]
    return [c for c in dict.fromkeys(named) if c != "plain" and not is_filesystem(c)]


def out_of_scope(claim: Claim, ev: Evidence, is_filesystem=in_filesystem) -> Outcome | None:
    """The claim's outcome when the study lacks what it needs (not testable, with what
    would test it), else None: the check decides it. `is_filesystem(codec)`: whether a
    codec compresses inside the filesystem (the codec registry's)."""
    needs = claim.needs
    if "levels" in needs and (missing := _missing_levels(claim, ev)):
        need = needs["levels"]
        lv = [int(x) for x in need["levels"]]
        return _not_testable(f"read from {need['tool']} at levels {min(lv)}-{max(lv)}; "
                             f"not measured: {'; '.join(missing)}",
                             f"a study of every level ({claim.overlay})")
    if "workload" in needs and _workload_missing(claim, ev):
        need = needs["workload"]
        return _not_testable(f"read from {need['what']}; no setting here runs it "
                             f"({need['factor']} = {need['value']})",
                             f"a study whose settings have {need['factor']} = {need['value']}")
    if (need := needs.get("factor_values")) and (
            lacking := [shown_value(v) for v in need["values"]
                        if first_measured(factor_settings(ev, need["factor"]), v) is None]):
        return _not_testable(f"read from {need['what']}; no setting here has "
                             f"{need['factor']} = {', '.join(lacking)}",
                             f"a study whose {need['factor']} factor has "
                             f"{', '.join(map(shown_value, need['values']))}")
    if (what := needs.get("filesystem")) and (
            wrong := _not_in_filesystem(claim, ev, is_filesystem)):
        return _not_testable("about compression inside the filesystem; "
                             f"{', '.join(wrong)} here "
                             f"{'compresses' if len(wrong) == 1 else 'compress'} in user space",
                             f"the same algorithms as filesystem codecs ({what})")
    return None


def others_beside(claim: Claim, ev: Evidence) -> str:
    """The measured codecs outside the paper's tools, named beside the evidence."""
    scope = paper_codecs(claim, ev)
    if scope is None:
        return ""
    others = sorted(set(ev.codecs(all_codecs=True)) - scope)
    return (f" [not the paper's tools, so not deciding: {', '.join(others)}]"
            if others else "")
