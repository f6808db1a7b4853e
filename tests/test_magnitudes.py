"""One rule for the papers' magnitudes, in every table that prints a ratio."""

from __future__ import annotations

import pytest

from wattzip.analysis import cell_summary
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.breakeven import display, format_number, format_ratio, magnitude
from wattzip.latex import display_tex
from wattzip.report import comparison_cells, tex_tables

from .test_workflow import REPO

pytestmark = pytest.mark.pure

# Table 3 prints compress -b 10's zero-file ratio (today 344-362) as ~10^2 and gzip -6's
# (1030) as ~10^3: the floor of log10, and only above 100 ("greater than 100", Table 4).
EDGES = [(99.9, "99.90", "99.9"), (100.0, "100.00", "100.0"), (316.0, "~10^2", "~10^2"),
         (362.0, "~10^2", "~10^2"), (999.0, "~10^2", "~10^2"), (1000.0, "~10^3", "~10^3")]


@pytest.mark.parametrize(("value", "ratio", "breakeven"), EDGES)
def test_magnitude_edges(value, ratio, breakeven):
    assert format_ratio(value) == ratio
    assert format_number(value) == breakeven
    assert display("at_most", value) == f"≤ {breakeven}"


def test_magnitude_counts_in_integers():
    assert [magnitude(v) for v in (101, 999.999, 1000, 1e6, 10**15 - 1)] == [2, 2, 3, 6, 14]


def _summary_row(ratio):
    base = {"testbed": "t", "setting": "s", "file_type": "zero", "codec": "c-10",
            "op": "compress-write", "repeat": 1, "verified": True, "elapsed_s": 1.0,
            "user_s": 1.0, "sys_s": 0.0, "wait_s": 0.0, "cpu_utilization": 1.0,
            "energy_j": 1.0, "energy_active_j": 0.5, "energy_passive_j": 0.5,
            "input_bytes": 362_000, "output_bytes": 362_000 / ratio}
    return cell_summary.summarize([base], AnalysisOptions())[0]


def test_the_summary_holds_the_ratio_cell_the_table_places():
    """c-10's zero ratio 362: ~10^2 in the table as in comparison.csv (it was ~10^3)."""
    row = _summary_row(362.0)
    assert row["compression_ratio_tex"] == display_tex("~10^2") == r"$\sim\!10^{2}$"


def test_the_ratio_table_only_places_the_cell():
    """The ratios' table places the cell as the analysis set it ("1.00" stays "1.00") and
    formats nothing."""
    code = (REPO / "wattzip" / "report" / "tex_tables.py").read_text()
    assert "log10" not in code and "format_ratio" not in code
    cells = [{"codec": f"gz-{level}", "tool": "gzip", "level": level, "file_type": "text",
              "cell": cell} for level, cell in (("1", "1.00"), ("9", "4.10"))]
    lines = tex_tables.by_file_type(cells, "r", "")
    assert [line for line in lines if line.startswith("gz-")] == [r"gz-1 & 1.00 \\",
                                                                   r"gz-9 & 4.10 \\"]


def test_the_texts_ratios_share_the_formatter():
    from types import SimpleNamespace

    from wattzip.report import macros

    t = SimpleNamespace(summary=[{"file_type": "zero", "codec": "c-10", "op": "compress-write",
                                  "compression_ratio": "362.0"}])
    assert macros.compression_ratio(t, "zero", "c-10") == r"$\sim\!10^{2}$"


def test_the_table_keeps_the_formatters_cells_as_text():
    """An original table whose cells all look like numbers keeps them as the formatter set
    them, through the cells' composition and the table: "4.0" is not 4."""
    summary = [{"codec": "gz-1", "tool": "gzip", "level": "1", "file_type": "text",
                "op": "compress-write", "n": "3", "compression_ratio_tex": "4.00",
                "compression_ratio": "4.0"}]
    original = [{"codec": "gz-1", "file_type": "text", "display_tex": "4.0", "display": "4.0"}]
    rows = comparison_cells.ratio_rows(summary, [original])
    assert r"gz-1 & 4.00$^{=}$ {\scriptsize(4.0)} \\" in tex_tables.by_file_type(rows, "r", "")
