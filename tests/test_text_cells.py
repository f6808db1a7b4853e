"""Free text in the report: one formatter (wattzip.latex.tex) for the claims' and the
provenance's cells, the appendix and the passages, which the tables only lay out."""

from __future__ import annotations

import pytest

from wattzip.latex import tex
from wattzip.report import tex_tables, text_cells

pytestmark = pytest.mark.pure


@pytest.mark.parametrize(("text", "shown"), [
    ("C:\\path{x}", r"C:\textbackslash{}path\{x\}"),
    ("ratio ~10^2 on zero", r"ratio $\sim\!10^{2}$ on zero"),
    ("~x and 2^3", r"\textasciitilde{}x and 2\textasciicircum{}3"),
    ("50% of #1 & $2 < 3 > 1", r"50\% of \#1 \& \$2 $<$ 3 $>$ 1"),
    ("∀ × ≤ 4", r"$\forall$ $\times$ $\le$ 4"),
])
def test_free_text_is_set_once_for_latex(text, shown):
    assert tex(text) == shown


def claim(verdict, **fields):
    return {"setting": "all", "primary": "", "claim": "gzip pays ~10^2", "source": "S09 §5",
            "verdict": verdict, "evidence": "n_be = 3", "estimated": "false",
            "model_robustness": "", **fields}


def test_a_claims_cells():
    rows = text_cells.claim_rows([
        claim("holds", estimated="true", model_robustness="robust to the model"),
        claim("not testable here: no btrfs_zlib", evidence=""),
        claim("refuted", setting="x2", primary="false"),
        claim("refuted", setting="x1", primary="true", simulated="true"),
    ])
    assert len(rows) == 3  # a setting that is not the primary one is left out
    held, untestable, refuted = rows
    assert held["claim"] == r"gzip pays $\sim\!10^{2}$" and held["source"] == "S09 §5"
    assert held["verdict"] == r"\textbf{holds}$^{\ast}$ (robust to the model)"
    assert held["estimated"] is True and held["simulated"] is False
    # an untestable claim's reason goes with the numbers
    assert untestable["verdict"] == r"\emph{not testable here}"
    assert untestable["evidence"] == r"no btrfs\_zlib"
    assert refuted["verdict"] == r"\textbf{refuted}" and refuted["simulated"] is True


@pytest.mark.parametrize("table", ["claims", "provenance"])
def test_the_table_lays_out_the_cells_as_set(tmp_path, table):
    source = tmp_path / f"{table}.csv"
    if table == "claims":
        source.write_text("setting,primary,claim,source,verdict,evidence,estimated,"
                          "model_robustness\nall,,a_b,S09,holds,~10^3,true,\n")
        expected = r"a\_b & S09 & \textbf{holds}$^{\ast}$ & $\sim\!10^{3}$ \\"
    else:
        source.write_text("key,value,simulated\ncpu,Intel(R) 50% \\ x,true\n")
        expected = r"cpu & Intel(R) 50\% \textbackslash{} x \\"
    text = getattr(tex_tables, table)({table: source}).text()
    assert expected in text
    assert ("SIMULATED" in text) is (table == "provenance")
    assert ("ESTIMATED" in text) is (table == "claims")
