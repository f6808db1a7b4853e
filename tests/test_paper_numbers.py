"""No number of an original paper is typed into code: they live in paper/reference/.

The check looks for the papers' distinctive numbers (from the reference tables and the
claims' parameters) in the Python, R and Snakemake sources: every value with three or
more significant digits, or two at 5 and above, anywhere; and in string literals, where a
result is cited, also their whole-number roundings at 50 and above ("125 / 91 / 130 Wh"
for 125.39, 90.99, 130.32). Section numbers in prose (SYSTOR '09 4.3) are not numbers of
a result and are passed over.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.pure


REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "paper" / "reference"
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
# Plot geometry (a figure's height, a label's size) is not a result either.
LAYOUT = re.compile(r"(?:height|width|size|vjust|hjust|linewidth|alpha)\s*=\s*$")
SECTION = re.compile(r"(?:section|sections|SYSTOR '\d\d|HPC '\d\d|Table|Figure|§)\s*$",
                     re.IGNORECASE)


def _significant(text: str) -> int:
    return len(text.replace(".", "").lstrip("0").rstrip("0")) if "." in text else len(
        text.lstrip("0"))


def paper_numbers() -> tuple[set[str], set[str]]:
    """(the papers' numbers as written, their roundings that a citation would use)."""
    found: set[float] = set()
    for path in REFERENCE.glob("*.csv"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("#"):
                found |= {float(t) for t in NUMBER.findall(line) if "." in t
                          and (_significant(t) >= 3 or (_significant(t) == 2 and float(t) >= 5))}

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                yield from walk(v)
        elif isinstance(x, list):
            for v in x:
                yield from walk(v)
        elif isinstance(x, float):
            yield x

    for entry in yaml.safe_load((REFERENCE / "claims.yaml").read_text()):
        found |= {v for v in walk(entry.get("parameters") or {}) if _significant(repr(v)) >= 3}
    return {f"{v:g}" for v in found if v % 1}, {str(round(v)) for v in found if v >= 50 and v % 1}


def code_files() -> list[Path]:
    return [*REPO.glob("wattzip/**/*.py"), *REPO.glob("scripts/*.py"), *REPO.glob("scripts/*.R"),
            *REPO.glob("rules/*.smk"), REPO / "Snakefile"]


def test_no_original_number_in_code():
    exact, rounded = paper_numbers()
    assert {"7.6", "20.2", "0.991"} <= exact and {"125", "91", "130"} <= rounded
    hits = []
    for path in code_files():
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in NUMBER.finditer(line):
                before = line[:m.start()]
                in_string = before.count('"') % 2 == 1 or before.count("'") % 2 == 1
                if (m.group() in exact or (in_string and m.group() in rounded)) and \
                        not SECTION.search(before) and not LAYOUT.search(before):
                    hits.append(f"{path.relative_to(REPO)}:{i}: {m.group()}: {line.strip()}")
    assert not hits, "numbers of the original papers typed into code:\n" + "\n".join(hits)
