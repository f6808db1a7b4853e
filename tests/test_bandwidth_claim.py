"""Break-even against the disk's bandwidth: the slow-disk claim and the bandwidth figure,
on synthetic runs of settings that differ in the emulated disk alone."""

from __future__ import annotations

import subprocess

import pytest

from wattzip import records
from wattzip.analysis import cell_summary, claims, run_tables
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.breakeven import parse_display
from wattzip.analysis.reference import read_reference

from .test_analysis import REFERENCE, run

pytestmark = pytest.mark.pure

REPO = REFERENCE.parent.parent

CLAIM = "slow_disk_text_time"
DISKS = {"unlimited": None, "500MBps": 500_000_000, "70MBps": 70_000_000, "30MBps": 30_000_000}
# Times (s) of plain-write, compress-write, plain-read, decompress-read: a slow disk makes
# the plain operations slow and the compressed ones, which move fewer bytes, less so.
ALWAYS = (10.0, 8.0, 10.0, 6.0)  # dw < 0 < dr
AT_LEAST = (10.0, 14.0, 10.0, 6.0)  # dw > 0 < dr: pays from one read per write on
NEVER = (10.0, 14.0, 10.0, 12.0)


def setting_name(disk: str) -> str:
    return f"ext2.io-keep.gov-keep.x1.bw-{disk}"


def settings_of(disks) -> dict[str, dict]:
    """The study model's settings: the bandwidth varied, the uncapped disk primary."""
    return {setting_name(d): {"setting": setting_name(d), "medium": "ext2",
                              "io_scheduler": "keep", "governor": "keep", "copies": 1, "threads": 0,
                              "bandwidth_bytes_per_s": DISKS[d], "dutycycle": "",
                              "primary": d == "unlimited"} for d in disks}


def four_ops(disk, file_type, codec, times, spread=0.01, n=3, method="measured"):
    """n runs of each of the four operations at the given mean times, in one setting; the
    codec's runs spread by `spread`, the plain ones (shared by the codecs) hardly."""
    rows = []
    for i in range(n):
        for op, c, t in zip(("plain-write", "compress-write", "plain-read", "decompress-read"),
                            ("plain", codec, "plain", codec), times, strict=True):
            jitter = (spread if c != "plain" else 0.01) * (i - (n - 1) / 2)
            rows.append({**run(file_type, c, op, 100 * (t + jitter), elapsed_s=t + jitter,
                               repeat=i + 1, method=method, output_bytes=500 if c != "plain"
                               else 1000), "setting": setting_name(disk)})
    return rows


def study(cells: dict, method="measured") -> list[dict]:
    """Runs of {(disk, file type, codec): times or (times, spread)}, plain runs once each."""
    rows, seen = [], set()
    for (disk, ftype, codec), spec in cells.items():
        times, spread = spec if isinstance(spec[0], tuple) else (spec, 0.01)
        for r in four_ops(disk, ftype, codec, times, spread, method=method):
            key = (r["setting"], r["file_type"], r["codec"], r["op"], r["repeat"])
            if key not in seen:
                seen.add(key)
                rows.append(r)
    return rows


def tables(rows, disks):
    settings = settings_of(disks)
    summary = run_tables.label(cell_summary.summarize(rows, AnalysisOptions()), settings)
    breakeven = run_tables.label(run_tables.breakeven_table(rows, AnalysisOptions()), settings)
    return summary, breakeven


def verdict(cells: dict, method="measured", budget=None) -> dict:
    rows = [{**r, "bandwidth_budget": budget} for r in study(cells, method)]
    disks = sorted({d for d, _, _ in cells}, key=list(DISKS).index)
    summary, breakeven = tables(rows, disks)
    decided = claims.decide(summary, breakeven, cell_summary.correlation_table(rows), rows,
                            REFERENCE, options=AnalysisOptions())
    return next(c for c in decided if c["claim_id"] == CLAIM)


def text_cells(at_slowest_gz, at_slowest_lzo, faster=AT_LEAST, disks=DISKS):
    """gz-1 and lzo-1 on text: `faster` on every disk but the slowest."""
    slowest = list(disks)[-1]
    out = {}
    for d in disks:
        out[(d, "text", "gz-1")] = at_slowest_gz if d == slowest else faster
        out[(d, "text", "lzo-1")] = at_slowest_lzo if d == slowest else faster
    return out


def test_holds_when_both_save_time_on_write_and_read_at_the_slowest_disk():
    c = verdict(text_cells(ALWAYS, ALWAYS), method="estimated")
    assert c["verdict"] == "holds", c
    assert "30 MB/s" in c["evidence"] and "text gz-1 ∀" in c["evidence"]
    assert "original: gz-1 ∀, lzo-1 ∀" in c["evidence"]  # the laptop slide
    assert not c["estimated"]  # time is measured, even where energy is estimated
    assert c["setting"] == "all" and c["factor"] == "bandwidth"


def test_refuted_when_a_cell_is_decided_otherwise_at_the_slowest_disk():
    c = verdict(text_cells(AT_LEAST, ALWAYS, faster=ALWAYS))
    assert c["verdict"] == "refuted", c
    assert "text gz-1 1.0" in c["evidence"]


def test_a_no_on_two_budgets_is_the_emulations_not_the_disks():
    """Reads and writes capped apart understate the write side's saving: a cell that does
    not pay there neither refutes the claim nor holds it."""
    c = verdict(text_cells(AT_LEAST, ALWAYS, faster=ALWAYS),
                budget="each device's reads and writes apart")
    assert c["verdict"].startswith("not testable here"), c
    assert "inputs: on-medium" in c["verdict"]
    one = verdict(text_cells(AT_LEAST, ALWAYS, faster=ALWAYS), budget="one for reads and writes")
    assert one["verdict"] == "refuted", one


def test_only_the_slowest_disk_decides():
    c = verdict(text_cells(ALWAYS, ALWAYS, faster=NEVER))
    assert c["verdict"] == "holds", c


def test_a_fast_slowest_disk_neither_holds_nor_refutes():
    """Costing time on a 70 MB/s disk says nothing of a slow enough (laptop) disk."""
    fast = {k: v for k, v in DISKS.items() if k != "30MBps"}
    c = verdict(text_cells(NEVER, NEVER, disks=fast))
    assert c["verdict"].startswith("not testable here"), c
    assert "at most 30 MB/s" in c["verdict"] and "70 MB/s" in c["verdict"]


def test_not_testable_without_a_bandwidth_factor():
    c = verdict({("unlimited", "text", "gz-1"): ALWAYS, ("unlimited", "text", "lzo-1"): ALWAYS})
    assert c["verdict"].startswith("not testable here"), c
    assert "bandwidth factor" in c["verdict"] and "config/disks.yaml" in c["verdict"]


def test_not_testable_when_a_codec_is_missing_at_the_slowest_disk():
    cells = {k: v for k, v in text_cells(ALWAYS, ALWAYS).items() if k[2] != "lzo-1"}
    c = verdict(cells)
    assert c["verdict"].startswith("not testable here"), c
    assert "lzo-1 on text at 30 MB/s" in c["verdict"]


def test_an_undecided_cell_is_named_not_refuted():
    # gz-1's write costs 0.2 s less against a spread of 3 s: dw's interval holds zero.
    noisy = ((10.0, 9.8, 10.0, 6.0), 3.0)
    c = verdict(text_cells(noisy, ALWAYS))
    assert c["verdict"].startswith("not testable here"), c
    assert "cannot decide text gz-1 T" in c["verdict"]
    assert "undecided" in c["note"] and "lzo-1" not in c["note"]


def test_the_claim_cites_cells_the_slides_mark_always():
    """The registry's expected kind is the laptop slide's, cell by cell."""
    claim = next(c for c in claims.load_claims(REFERENCE) if c.id == CLAIM)
    p = claim.parameters["cells"]
    _, rows = read_reference(REFERENCE / f"{claim.reference[0]}.csv")
    kinds = {parse_display(r["display"]).kind for r in rows if r["codec"] in p["codecs"]
             and r["file_type"] in p["file_types"] and r["metric"] == p["metric"]}
    assert kinds == {claim.parameters["expected"]}
    assert claim.section.startswith("slides") and not claim.energy


FIGURE_RUNNER = """
setClass("Snakemake", representation(input = "list", output = "list", log = "list",
                                     wildcards = "list", params = "list"))
args <- commandArgs(trailingOnly = TRUE)
snakemake <- new("Snakemake", input = list(breakeven = args[1], summary = args[2]),
                 output = list(args[3]), log = list(args[4]), wildcards = list(),
                 params = list())
source("scripts/fig_bandwidth.R")
"""


@pytest.fixture(scope="module")
def bandwidth_figure(tmp_path_factory):
    """fig_bandwidth.R on four disks: gz-1 pays from 70 MB/s down, lzo-1 everywhere but
    an undecided 500 MB/s, bz-1 never; energy estimated."""
    tmp = tmp_path_factory.mktemp("bandwidth")
    cells = {}
    for d in DISKS:
        cells[(d, "text", "gz-1")] = ALWAYS if d in ("70MBps", "30MBps") else AT_LEAST
        cells[(d, "text", "lzo-1")] = ((10.0, 9.8, 10.0, 6.0), 3.0) if d == "500MBps" \
            else ALWAYS
        cells[(d, "text", "bz-1")] = NEVER
        cells[(d, "binary", "gz-1")] = AT_LEAST
    rows = study(cells, method="estimated")
    summary, breakeven = tables(rows, list(DISKS))
    records.write_table(summary, tmp / "summary.csv")
    records.write_table(breakeven, tmp / "breakeven.csv")
    (tmp / "run.R").write_text(FIGURE_RUNNER)
    out, log = tmp / "bandwidth.pdf", tmp / "bandwidth.log"
    proc = subprocess.run(["Rscript", str(tmp / "run.R"), str(tmp / "breakeven.csv"),
                           str(tmp / "summary.csv"), str(out), str(log)],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:] + log.read_text(errors="replace")
    return out, log.read_text()


def test_bandwidth_figure_renders_with_a_bandwidth_factor(bandwidth_figure):
    pdf, _ = bandwidth_figure
    assert pdf.read_bytes()[:5] == b"%PDF-"
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert "ESTIMATED" in text and "starts to pay" in text
    for disk in ("unlimited", "500 MB/s", "70 MB/s", "30 MB/s"):
        assert disk in text


def test_bandwidth_figure_marks_where_compression_starts_to_pay(bandwidth_figure):
    _, log = bandwidth_figure
    marks = {line.split(": ", 1)[1] for line in log.splitlines()
             if line.startswith("compression starts to pay")}
    assert marks == {f"{m} text {c} from 70 MB/s" for m in ("T", "E") for c in ("gz-1", "lzo-1")}
