"""The HPC '14 tables' cells: set in Python (wattzip.report.hpc14_cells) from the summary's
numbers, laid out by wattzip.report.tex_tables."""

from __future__ import annotations

import pytest

from wattzip.report import hpc14_cells, legends, tex_tables

from .test_workflow import REPO

pytestmark = pytest.mark.pure


def summary_row(file_type, codec, op, elapsed, energy, cpu=0.5, tool="gzip", **extra):
    return {"file_type": file_type, "codec": codec, "op": op, "tool": tool, "level": "1",
            "mean_elapsed_s": str(elapsed), "mean_energy_j": str(energy),
            "mean_cpu_utilization": str(cpu), "compression_ratio_tex": "2.00",
            "meter_method": "estimated", "hw_elapsed_s": "", "hw_energy_j": "",
            "hw_cpu_utilization": "", **{f"{stem}{end}": "" for stem in RATIOS
                                          for end in ("", "_lo", "_hi")}, **extra}


RATIOS = ("elapsed_vs_off", "energy_vs_off")  # as wattzip.analysis.ratio_to_off gives them


def test_each_write_is_against_plains_write_of_the_same_file():
    summary = [summary_row("text", "plain", "plain-write", 2.0, 10, tool="plain"),
               summary_row("text", "gz-1", "compress-write", 5.0, 30, cpu=0.956,
                           elapsed_vs_off="2.5"),
               summary_row("zero", "plain", "plain-write", 1.0, 4, tool="plain"),
               summary_row("zero", "btrfs-lzo", "compress-write", 0.5, 3, tool="btrfs",
                           elapsed_vs_off="0.5"),
               summary_row("random", "btrfs-lzo", "compress-write", 9, 9, tool="btrfs"),
               summary_row("text", "gz-1", "decompress-read", 1.0, 5),
               summary_row("text", "bz2-9", "compress-write", 7.0, 50, tool="bzip2")]
    rows = {(r["file_type"], r["codec"]): r
            for r in hpc14_cells.filesystem_rows(summary, ["gz-1"])}
    # no plain write of random: nothing to hold its write against; bz2-9 is in no table
    assert set(rows) == {("text", "plain"), ("text", "gz-1"), ("zero", "plain"),
                         ("zero", "btrfs-lzo")}
    assert rows["text", "gz-1"]["runtime_vs_off"] == "2.50"
    assert rows["zero", "btrfs-lzo"]["runtime_vs_off"] == "0.50"
    assert rows["text", "gz-1"]["cpu_percent"] == "96"
    assert rows["text", "gz-1"]["energy_j"] == "30.0"
    assert rows["text", "gz-1"]["estimated"] is True


def test_a_missing_number_is_a_dash_never_nan():
    summary = [summary_row("text", "plain", "plain-write", 0.0, "", tool="plain"),
               summary_row("text", "gz-1", "compress-write", 5.0, "", cpu="")]
    gz = [r for r in hpc14_cells.filesystem_rows(summary, ["gz-1"]) if r["codec"] == "gz-1"][0]
    assert (gz["cpu_percent"], gz["runtime_vs_off"], gz["energy_j"]) == ("--", "--", "--")


def test_a_duty_cycle_is_held_against_plains_run_of_the_same_workload():
    summary = [summary_row("text", "plain", "write-compute", 40.0, 200, tool="plain"),
               summary_row("text", "gz-1", "write-compute", 50.0, 250, energy_vs_off="1.25"),
               summary_row("text", "gz-1", "compress-write", 5.0, 30)]
    rows = {r["codec"]: r for r in hpc14_cells.duty_rows(summary)}
    assert set(rows) == {"plain", "gz-1"}
    assert (rows["gz-1"]["time_s"], rows["gz-1"]["power_w"], rows["gz-1"]["energy_j"],
            rows["gz-1"]["energy_vs_off"]) == ("50.00", "5.0", "250.0", "1.25")
    no_plain = hpc14_cells.duty_rows([{**summary[1], "energy_vs_off": ""}])
    assert no_plain[0]["energy_vs_off"] == "--"


def test_a_mean_carries_its_half_width_where_there_are_two_runs():
    """Time, energy and CPU share with the summary's half-widths (the repeats' interval
    at the level the note names); one run has none, and its mean stands alone."""
    summary = [summary_row("text", "plain", "plain-write", 2.0, 10, tool="plain"),
               summary_row("text", "gz-1", "compress-write", 5.0, 30, cpu=0.956,
                           hw_elapsed_s="0.25", hw_energy_j="1.234",
                           hw_cpu_utilization="0.031", elapsed_vs_off="2.5",
                           elapsed_vs_off_lo="2.26", elapsed_vs_off_hi="2.771"),
               summary_row("text", "plain", "write-compute", 40.0, 200, tool="plain",
                           hw_elapsed_s="1.5", hw_energy_j="nan"),
               summary_row("text", "gz-1", "write-compute", 50.0, 250,
                           hw_elapsed_s="2.125", hw_energy_j="12.5")]
    fs = {r["codec"]: r for r in hpc14_cells.filesystem_rows(summary, ["gz-1"])}
    assert (fs["gz-1"]["cpu_percent"], fs["gz-1"]["energy_j"]) == (
        r"96\,$\pm$\,3", r"30.0\,$\pm$\,1.2")
    assert (fs["plain"]["cpu_percent"], fs["plain"]["energy_j"]) == ("50", "10.0")
    # the ratio of the means with Fieller's interval, as the analysis gave them
    assert fs["gz-1"]["runtime_vs_off"] == r"2.50\,[2.26, 2.77]"
    duty = {r["codec"]: r for r in hpc14_cells.duty_rows(summary)}
    assert (duty["gz-1"]["time_s"], duty["gz-1"]["energy_j"]) == (
        r"50.00\,$\pm$\,2.12", r"250.0\,$\pm$\,12.5")
    assert (duty["plain"]["time_s"], duty["plain"]["energy_j"]) == (
        r"40.00\,$\pm$\,1.50", "200.0")


def originals() -> dict[str, str]:
    reference = REPO / "paper" / "reference"
    return hpc14_cells.originals(reference / "hpc14_table2_patterns.csv",
                                 reference / "hpc14_table3_write_only.csv",
                                 reference / "hpc14_table4_write_compute.csv")


def test_the_originals_notes_are_the_papers_cells():
    notes = originals()
    assert "repeated lz4 126.96 / 15.8\\% / 1.28" in notes["filesystem"]
    assert notes["filesystem"].endswith("random gzip-1 1.00 / 66.1\\% / 1.03.")
    assert notes["duty"].startswith("Originals (Lustre on ZFS, 600 GB written")
    assert ("gzip-1 554 s, 848 W, 130.3 Wh; with computation off 3212 s, 456 W, 406.9 Wh"
            in notes["duty"]) and notes["duty"].endswith("gzip-1 2951 s, 504 W, 412.8 Wh.")


@pytest.mark.parametrize("simulated", [True, False])
def test_the_table_prints_the_cells_as_set(simulated):
    """Every cell as hpc14_cells set it, in the codecs' order, and SIMULATED above a
    rehearsal's tables only, once for the file (it said so again inside each float)."""
    extra = {"simulated": "true"} if simulated else {}
    summary = [summary_row("text", "plain", "plain-write", 2.0, 10, tool="plain", **extra),
               summary_row("text", "gz-1", "compress-write", 5.0, 30, elapsed_vs_off="2.5",
                           elapsed_vs_off_lo="2.26", elapsed_vs_off_hi="2.771", **extra),
               summary_row("text", "plain", "write-compute", 40.0, 200, tool="plain", **extra),
               summary_row("text", "gz-1", "write-compute", 50.0, 250, energy_vs_off="1.25",
                           **extra)]
    tex = tex_tables.hpc14_tables(summary, ["gz-1"], originals()).text()
    assert "text & gz-1 & 2.00 & 50 & 2.50\\,[2.26, 2.77] & 30.0 \\\\" in tex
    assert "gz-1 & 2.00 & 50.00 & 5.0 & 250.0 & 1.25 \\\\" in tex
    assert tex.index("text & plain") < tex.index("text & gz-1")
    assert "repeated gzip-1 126.96 / 23.3\\% / 1.24" in tex
    assert tex.count("SIMULATED") == int(simulated)
    # the captions as hpc14_cells set them too: the layout types no text of its own
    assert all(f"\\caption{{{c}}}" in tex for c in hpc14_cells.CAPTIONS.values())
    assert not simulated or tex.index("SIMULATED") < tex.index("\\begin{table}")
    # the notes as Python set them: the estimated energy said under each table
    assert tex.count(legends.ESTIMATED) == 2 and r"\HalfWidthConfidencePct{}" in tex


def test_a_table_s_note_says_estimated_only_where_its_energy_is():
    """The filesystem table's energy is measured, the duty cycle's estimated: each note
    says so of its own table."""
    measured = {**summary_row("text", "plain", "plain-write", 2.0, 10, tool="plain"),
                "meter_method": "measured"}
    filesystem = hpc14_cells.filesystem_rows([measured], [])
    duty = hpc14_cells.duty_rows([summary_row("text", "plain", "write-compute", 40.0, 200)])
    notes = {r["part"]: r["text"] for r in hpc14_cells.notes_rows(originals(), filesystem,
                                                                  duty)}
    assert legends.ESTIMATED not in notes["filesystem"]
    assert notes["duty"].startswith("Power is the mean energy over the mean time.")
    assert notes["duty"].endswith(legends.ESTIMATED)
