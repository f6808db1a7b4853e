"""Every codec of the registry in one study: the figure scripts draw them all.

The tables are the committed fixture's, one codec's rows repeated for every codec of
the registry (wattzip.workload.codec_registry, file-system codecs included); each figure is drawn by
its real R script, given the `snakemake` object that Snakemake's script directive gives it.
"""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pytest

from wattzip.workload import codec_registry

from .test_workflow import REPO

pytestmark = pytest.mark.pure

FIXTURE = next((REPO / "tests" / "data" / "fixture").rglob("summary.csv")).parent
TEMPLATE_CODEC = "gz-1"
# The figure scripts whose colours, shapes or line types tell codecs or tools apart.
FIGURES = [("ratio", {}), ("tradeoff", {}), ("esav", {}), ("levels", {}),
           ("energy", {"ftype": "text", "metric": "energy"}), ("time", {"ftype": "text"}),
           ("et", {"ftype": "random", "metric": "et", "script": "energy"})]
# Snakemake's R preamble in miniature: the slots the figure scripts read.
WRAPPER = """
setClass("Snakemake", representation(input = "list", output = "list", log = "list",
                                     wildcards = "list", params = "list"))
args <- commandArgs(trailingOnly = TRUE)
snakemake <- new("Snakemake",
  input = list(summary = args[2], esav = args[3], breakeven = args[4]),
  output = list(args[5]), log = list(args[6]), params = list(),
  wildcards = list(ftype = args[7], kind = args[8], metric = args[9]))
source(args[1])
"""


def every_codec() -> list[codec_registry.Codec]:
    return codec_registry.resolve(["all", "fs"])


def read(name: str) -> list[dict]:
    with open(FIXTURE / f"{name}.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def scaled(value: str, factor: float) -> str:
    try:
        return repr(float(value) * factor)
    except ValueError:
        return value


def every_codec_table(name: str, out: Path, scale: tuple[str, ...]) -> Path:
    """The fixture's table with the template codec's rows repeated for every codec, their
    `scale` columns spread so that no two codecs draw on top of each other."""
    rows = read(name)
    template = [r for r in rows if r["codec"] == TEMPLATE_CODEC]
    out_rows = [r for r in rows if r["codec"] != TEMPLATE_CODEC and r["codec"] != "lzo-1"]
    for i, codec in enumerate(every_codec()):
        for r in template:
            row = {**r, "codec": codec.name}
            if "tool" in row:
                row.update(tool=codec.tool, level=codec.level)
            out_rows.append({**row, **{k: scaled(row[k], 1 + i / 20) for k in scale}})
    path = out / f"{name}.csv"
    write(out_rows, path)
    return path


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("every_codec")
    return {
        "summary": every_codec_table("summary", out, ("compression_ratio", "mean_energy_j",
                                                      "mean_elapsed_s", "mean_et_js")),
        "esav": every_codec_table("esav", out, ("esav_j", "lo_j", "hi_j")),
        "breakeven": every_codec_table("breakeven", out, ("value",)),
        "out": out,
    }


def test_the_registry_has_more_tools_than_one_palette_has_colours():
    assert len({c.tool for c in every_codec()}) > 9  # Okabe-Ito's colours


@pytest.mark.parametrize(("kind", "wildcards"), FIGURES, ids=[f[0] for f in FIGURES])
def test_a_figure_draws_every_codec_of_the_registry(tables, kind, wildcards):
    out = tables["out"]
    (out / "wrapper.R").write_text(WRAPPER)
    pdf, log = out / f"{kind}.pdf", out / f"{kind}.log"
    proc = subprocess.run(
        ["Rscript", out / "wrapper.R", f"scripts/fig_{wildcards.get('script', kind)}.R",
         tables["summary"], tables["esav"], tables["breakeven"], pdf, log,
         wildcards.get("ftype", ""), kind, wildcards.get("metric", "")],
        cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, (proc.stderr + log.read_text(errors="replace"))[-3000:]
    assert pdf.read_bytes()[:5] == b"%PDF-"
    text = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True,
                          check=True).stdout
    if kind in ("ratio", "tradeoff", "esav"):  # a legend of tools: every one named
        tools = {"ppmd" if c.tool == "7zz" else c.tool for c in every_codec()}
        assert tools <= set(text.split()), sorted(tools - set(text.split()))
