"""The report's prose states no number by hand: what a config decides comes from the
study model, what the original did from paper/reference/systor09_design.csv."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wattzip.analysis.reference import read_reference
from wattzip.model import repeat_design
from wattzip.model.study import Study
from wattzip.report.macros import file_size_against_original

pytestmark = pytest.mark.pure

REPO = Path(__file__).resolve().parent.parent
DESIGN = {r["quantity"]: r for r in read_reference(REPO / "paper/reference/systor09_design.csv")[1]}
# The numbers main.tex may name: the papers' sections, tables, figures and slides, a year,
# codec and tool names, and layout.
CITED = re.compile(
    r"SYSTOR '\d\d|(?:Tables?|Figures?|section|slide|paper)[~ ]\d+(?:\.\d+)?(?:--\d+)?|"
    r"and~\d\b|\b20\d\d\b|\b(?:gz|lzo)-\d\b|bzip2|7-Zip|7zz|-m0=|a4paper|red!\d+|"
    r"\d+(?:\.\d+)?(?:em|pt|cm)\b|[\d.]+\\linewidth")


def test_main_tex_types_no_number_but_citations():
    """The original's file size, idle periods, repeats and disk were typed into main.tex;
    they are macros now (\\PaperFileSize, \\PaperIdle, \\PaperRepeats, \\PaperTestDisk)."""
    typed = []
    for n, line in enumerate((REPO / "paper/main.tex").read_text().splitlines(), 1):
        prose = "" if line.lstrip().startswith("%") else line.split("%")[0]
        if re.search(r"\d", CITED.sub("", prose)):
            typed.append(f"{n}: {line}")
    assert not typed, "\n".join(typed)


@pytest.mark.parametrize(("size", "says", "not_said"), [
    ("64MiB", "rather than the paper's 2 GB, which was larger than the paper's 1 GB of RAM",
     "above"),
    ("2GiB", "The inputs are 2GiB, the paper's 2 GB.", "rather than"),
    ("4GiB", "above the paper's 2 GB", "rather than")])
def test_the_file_size_is_set_beside_the_original_s(size, says, not_said):
    text = file_size_against_original(size, DESIGN)
    assert says in text and not_said not in text


@pytest.mark.parametrize(("overlays", "says", "never"), [
    ([], "at a fixed 3 runs per operation", ["more until", "outlier"]),
    (["config/paper.yaml"], "more until each 95% half-width of T, user time, system time "
     "and wait time (elapsed less user and system) was under 5%", ["fixed"]),

    (["config/paper.yaml", "config/paper-moderated.yaml"], "planned looks at 2, 3, 4, 8",
     ["outlier"])])
def test_the_repeat_design_says_only_what_its_runs_can_do(overlays, says, never):
    """The default study's min = max = 3 adds no run, and an outlier is looked for among 5
    runs at least (stats.OUTLIER_MIN_RUNS): looks of 2, 3, 4 and 8 runs never go on for
    one, while the paper's rule at up to 30 runs and looks of 3, 5 and 8 can."""
    text = repeat_design.describe(Study.from_files(["config.yaml", *overlays]))
    assert says in text and not any(w in text for w in never), text
    if overlays == ["config/paper.yaml"]:
        assert "one more for each run newly found an outlier (modified Z > 3.5" in text
    verdict = Study.from_files(["config.yaml"])
    rule = Study({**verdict.config, "repeats": {"min": 3, "max": 10, "ci_target": 0.05}})
    assert "half-width of T, E and ET was under 5%" in repeat_design.describe(rule)
    verdict = Study({**verdict.config, "repeats": {
        **verdict.config["repeats"], "design": "verdict", "looks": [3, 5, 8]}})
    assert "going on to the next look for a run newly found an outlier" in \
        repeat_design.describe(verdict)


def test_the_figures_say_their_bars_are_the_repeats_and_leave_out_the_model_s_range():
    """Estimated energy's largest uncertainty is the coefficient table's range (the
    budget's model term); the error bars are the repeats' half-widths alone, and every
    energy figure's caption says so where the energy is estimated."""
    from wattzip.report import passages

    figures = passages.figure_list(["text"], estimated=True)
    captions = re.findall(r"\\caption\{(.*)\}", figures)
    assert len(captions) == 3 and all("half-widths of the repeats as error bars" in c
                                      for c in captions), figures
    energy = [c for c in captions if not c.startswith("Text file: Elapsed")]
    assert all("ESTIMATED energy: the bars leave out the coefficient table's range" in c
               for c in energy)
    assert "leave out" not in passages.figure_list(["text"], estimated=False)
    main = " ".join((REPO / "paper/main.tex").read_text().split())
    assert "so the estimate has none" not in main  # it has a spread: the table's own
    assert "figures' error bars, the repeats' spread, leave it out" in main
