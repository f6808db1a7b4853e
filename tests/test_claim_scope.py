"""Every claim decided only in its scope (claims.yaml `needs`,
wattzip.analysis.claims.scope): the paper's tools, the factor values a statement was read
from, its workload, compression inside the filesystem; and a "never pays back" is not a
late break-even."""

from __future__ import annotations

import pytest

from wattzip.analysis.claims import load_claims

from .test_analysis import cell, claims_by_id, dedupe_plain, paper_like_server

pytestmark = pytest.mark.pure


def levels_1_6_9() -> list[dict]:
    """gzip at levels 1, 6 and 9 on text, binary and random, as SYSTOR '11's workload."""
    rows = []
    for file_type in ("text", "binary", "random"):
        for level in (1, 6, 9):
            rows += cell(file_type, f"gz-{level}", 60_000, 50_000 + 10_000 * level, 40_000,
                         39_000, spread=50)
    return [{**r, "copies": 20} for r in dedupe_plain(rows)]


@pytest.mark.parametrize("claim_id", ["gzip_level_energy_peak", "level_max_energy_by_type"])
def test_levels_1_6_9_do_not_decide_a_claim_read_from_the_sweep_1_to_9(claim_id):
    claim = claims_by_id(levels_1_6_9())[claim_id]
    assert claim["verdict"].startswith("not testable here: read from gz at levels 1-9"), claim
    assert "gz-2,3,4,5,7,8" in claim["verdict"]


def test_a_tool_the_paper_did_not_run_does_not_decide_no_tool_claims():
    """zstd-3 saves energy on random files (it reads them back cheaper), which SYSTOR '09's
    tools do not: "no tool saves energy on random files" is decided on the paper's tools,
    and holds; zstd-3 is named beside the evidence."""
    rows = dedupe_plain(paper_like_server()
                        + cell("random", "zstd-3", 60_000, 50_000, 40_000, 30_000, cr=0.99,
                               spread=50))
    claim = claims_by_id(rows)["random_never"]
    assert claim["verdict"] == "holds", claim
    assert "zstd-3" not in claim["rests_on"]
    assert "not the paper's tools, so not deciding: zstd-3" in claim["evidence"]


def test_systor11_claims_need_systor11s_workload():
    claim = claims_by_id(paper_like_server())["text_more_than_binary"]
    assert claim["verdict"].startswith("not testable here: read from SYSTOR '11's workload")
    assert "copies = 20" in claim["verdict"]


def test_never_paying_back_does_not_confirm_a_late_break_even():
    """Table 4 gives gz-9 on text a finite break-even: a gz-9 whose reads cost more than
    plain reads (never pays back) refutes the claim, it does not confirm it."""
    rows = paper_like_server()
    for r in rows:
        if (r["file_type"], r["codec"], r["op"]) == ("text", "gz-9", "decompress-read"):
            r["energy_j"] += 5_000  # 43.5 kJ against plain's 40 kJ
    claim = claims_by_id(rows)["text_breakeven_high"]
    assert claim["verdict"] == "refuted", claim
    assert "never pays back" in claim["evidence"]


def test_user_space_lz4_does_not_decide_a_statement_about_zfs():
    rows = dedupe_plain(cell("binary", "lz4-1", 60_000, 50_000, 40_000, 30_000, spread=50)
                        + cell("binary", "gz-1", 60_000, 90_000, 40_000, 35_000, spread=50))
    claim = claims_by_id(rows)["hpc_lz4_write"]
    assert claim["verdict"].startswith("not testable here: about compression inside the "
                                       "filesystem"), claim


def test_the_projects_hypotheses_say_so_where_the_claim_is_cited():
    """The claims table's "Where" and the appendix read Claim.source: a hypothesis of the
    project is named as one there, and in claims.csv."""
    from wattzip.analysis.claims import load_claims

    claims = {c.id: c for c in load_claims()}
    assert claims["slow_disk_text_time"].source.endswith("(the project's hypothesis)")
    assert "per-mode models do better" in claims["sysid_linear_poor"].source
    assert claims["gzip_level_energy_peak"].section.startswith("6.1")
    row = claims_by_id(paper_like_server())["slow_disk_text_time"]
    assert row["source"].endswith("(the project's hypothesis)")
    assert row["origin"] == "hypothesis"
    assert claims_by_id(paper_like_server())["random_never"]["origin"] == "paper"


def test_two_claims_the_same_runs_cannot_both_bear_out_say_so():
    claim = claims_by_id(levels_1_6_9())["gzip_level_energy_peak"]
    assert "Cannot hold on the same runs as level_max_energy_by_type" in claim["evidence"]
    assert "6.1" in claim["evidence"] and "6.3" in claim["evidence"]


def test_the_claims_table_names_the_conflict_of_a_claim_it_cannot_test():
    from wattzip.report import text_cells

    row = {k: str(v) for k, v in claims_by_id(levels_1_6_9())["gzip_level_energy_peak"].items()}
    (cell,) = text_cells.claim_rows([{**row, "primary": "true"}])
    assert "not testable here" in cell["verdict"]
    assert "Cannot hold on the same runs as level" in cell["evidence"]


def test_energy_claims_of_a_meter_that_sees_no_disk_are_not_comparable():
    """The papers' energy is the whole machine's at the wall: with RAPL's package and DRAM
    an energy claim says it is not comparable, with what it would say and its numbers
    beside it; a claim of time alone is decided as before."""
    wall = claims_by_id(paper_like_server())
    rapl = claims_by_id([{**r, "meter_source": "powercap", "meter_scope": "package+dram"}
                         for r in paper_like_server()])
    about_energy = {c.id for c in load_claims() if c.energy}
    decided = [i for i, c in wall.items() if c["verdict"] in ("holds", "refuted")]
    energy = [i for i in decided if i in about_energy]
    assert energy and len(energy) < len(decided)
    for claim_id in energy:
        assert rapl[claim_id]["verdict"] == ("not comparable: the meter sees the CPU package "
                                             "and DRAM, not the disk (the papers measured "
                                             "the whole machine at the wall)")
        assert rapl[claim_id]["evidence"] == wall[claim_id]["evidence"]
        assert f"it would be: {wall[claim_id]['verdict']}" in rapl[claim_id]["note"]
    assert all(rapl[i]["verdict"] == wall[i]["verdict"] for i in decided if i not in energy)
