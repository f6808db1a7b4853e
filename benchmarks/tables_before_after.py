"""Benchmark notes: a study's tables before and after a change, cell by cell.

    .venv/bin/python benchmarks/tables_before_after.py [--rev main] [--results DIR]
        [--looks N] [--keep DIR]

Exports the tree of git revision REV (git archive) beside the work tree, and for
each runs its own analysis (`python -m wattzip analyze`, its package first on the
path) on the same runs, its tables as its rules make them (wattzip.report.tex_tables,
or in a tree before it the R table scripts with the inputs and params of their
rules), and its text macros (wattzip.report). Then it lists every analysis-table
cell, table cell, table note line and macro that differs. DIR is a testbed's
results (runs.csv, settings.csv, provenance.csv, idle/, plan/, manifest.json;
default: the committed fixture, tests/data/fixture/results/tiny). --looks N
analyses as the verdict design with N planned looks would (0: the paper's design).
"""

from __future__ import annotations

import argparse
import csv
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from arguments import existing_dir

from wattzip.analysis.reference import DISAGREEMENTS
from wattzip.model.layout import BREAKEVEN_ORIGINALS

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "data" / "fixture" / "results" / "tiny"
# (reference table, metrics, title) of each break-even table, as the tables have it
BREAKEVEN = BREAKEVEN_ORIGINALS
REFERENCES = ["systor09_table3_ratios", "systor11_table1_ratios", DISAGREEMENTS,
              *(v[0] for v in BREAKEVEN.values())]
ANALYSIS_TABLES = ["summary", "breakeven", "esav", "correlation", "claims", "comparison",
                   "pareto", "model_check"]


def export(rev: str, into: Path) -> Path:
    """REV's committed tree (no work-tree changes), unpacked into `into`."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=REPO,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def python(root: Path, args: list[str]) -> str:
    """A Python command with `root`'s wattzip first on the path."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode:
        sys.exit(f"{root}: {' '.join(args[:3])} failed:\n{proc.stderr[-2000:]}")
    return proc.stdout


def analyze(root: Path, results: Path, out: Path, looks: int) -> None:
    imported = python(root, ["-c", "import wattzip; print(wattzip.__file__)"]).strip()
    if not imported.startswith(str(root)):
        sys.exit(f"{root}: python imported {imported}, not this tree's wattzip")
    settings = results / "settings.csv"
    python(root, ["-m", "wattzip", "analyze", str(results / "runs.csv"), "--out", str(out),
                  "--reference", "paper/reference", "--looks", str(looks),
                  *(["--settings", str(settings)] if settings.exists() else [])])
    script = ("import sys\n"
              "from wattzip.analysis.reference import read_reference\n"
              "from wattzip.latex import display_tex\n"
              "from wattzip.records import write_csv_atomically\n"
              "for name in sys.argv[2:]:\n"
              "    _, rows = read_reference(f'paper/reference/{name}.csv')\n"
              "    rows = [{**r, 'display_tex': display_tex(r.get('display'))} for r in rows]\n"
              "    write_csv_atomically(rows, f'{sys.argv[1]}/{name}.csv', list(rows[0]))\n")
    (out / "reference").mkdir()
    python(root, ["-c", script, str(out / "reference"), *REFERENCES])


MOCK = """setClass("Snakemake", representation(input = "list", output = "list",
  params = "list", log = "list", wildcards = "list"))
snakemake <- new("Snakemake", input = {inputs}, output = list("{out}"),
  params = {params}, log = list("{log}"), wildcards = list())
source("scripts/{script}")
"""


def r_list(d: dict) -> str:
    def value(v):
        if isinstance(v, list):
            return "c(" + ", ".join(value(x) for x in v) + ")"
        return json.dumps(str(v))
    return "list(" + ", ".join(f"{k} = {value(v)}" for k, v in d.items()) + ")"


def r_table(root: Path, script: str, inputs: dict, params: dict, out: Path) -> None:
    """One table script run as its rule runs it (a snakemake object with its fields)."""
    mock = out.with_suffix(".R")
    mock.write_text(MOCK.format(inputs=r_list(inputs), params=r_list(params), out=out,
                                log=out.with_suffix(".log"), script=script))
    proc = subprocess.run(["Rscript", str(mock)], cwd=root, capture_output=True, text=True,
                          check=False)
    if proc.returncode:
        log = out.with_suffix(".log")
        sys.exit(f"{root}: {script} failed:\n{proc.stderr[-1500:]}"
                 f"{log.read_text()[-1500:] if log.exists() else ''}")


TEX_TABLES = """import json, sys
from wattzip.report import tex_tables
inputs, testbeds, names, out = (json.loads(sys.argv[1]), json.loads(sys.argv[2]),
                                json.loads(sys.argv[3]), sys.argv[4])
tex_tables.write_testbed(inputs, {"duty_codecs": []}, {n: f"{out}/{n}.tex" for n in names})
tex_tables.write_testbeds(testbeds, {}, {"testbeds": f"{out}/testbeds.tex"})
"""


def tex_tables(root: Path, out: Path, t: Path) -> None:
    """The tables as a tree's rules tables_of_testbed and table_testbeds write them
    (wattzip.report.tex_tables): the same tables as the R scripts of a tree before it."""
    inputs = {name: str(out / f"{name}.csv") for name in ("summary", "breakeven", "claims")}
    inputs |= {name: str(root / "paper" / "reference" / f"{name}.csv") for name in REFERENCES}
    testbeds = {"breakeven": [inputs["breakeven"]], "summary": [inputs["summary"]],
                "slides": [str(root / "paper" / "reference" /
                               f"systor09_slides_breakeven_{m}.csv")
                           for m in ("server", "desktop", "laptop")]}
    names = ["ratios", "claims", *(f"breakeven_{name}" for name in BREAKEVEN)]
    python(root, ["-c", TEX_TABLES, json.dumps(inputs), json.dumps(testbeds),
                  json.dumps(names), str(t)])


def tables(root: Path, results: Path, out: Path) -> None:
    """Each table with its rule's inputs and params: written by wattzip.report.tex_tables
    where the tree has it; else each table script, a tree's own cells rules first
    (comparison_cells, text_cells) where it has them, whose cells its scripts read; a
    tree before them reads the analysis tables, which each tree's script is handed too."""
    ref = out / "reference"
    t = out / "tex"
    t.mkdir()
    if (root / "wattzip" / "report" / "tex_tables.py").exists():
        tex_tables(root, out, t)
        return
    ratios = {"summary": out / "summary.csv", "table3": ref / "systor09_table3_ratios.csv",
              "table1": ref / "systor11_table1_ratios.csv"}
    r_table(root, "table_ratios.R", {**ratios, **cells(root, out, "ratio_cells", ratios, {})},
            {}, t / "ratios.tex")
    r_table(root, "table_claims.R", {"claims": out / "claims.csv",
                                     **text_cells(root, out, "claims")}, {},
            t / "claims.tex")
    for name, (reference, metrics, title) in BREAKEVEN.items():
        inputs = {"breakeven": out / "breakeven.csv", "summary": out / "summary.csv",
                  "reference": ref / f"{reference}.csv"}
        params = {"metrics": metrics, "original": title}
        r_table(root, "table_breakeven.R",
                {**inputs, **cells(root, out, "breakeven_cells", inputs, params, name)},
                params, t / f"breakeven_{name}.tex")
    inputs = {"breakeven": [out / "breakeven.csv"], "summary": [out / "summary.csv"],
              "slides": [ref / f"systor09_slides_breakeven_{m}.csv"
                         for m in ("server", "desktop", "laptop")]}
    r_table(root, "table_testbeds.R",
            {**inputs, **cells(root, out, "testbed_cells", inputs, {})}, {},
            t / "testbeds.tex")


COMPARISON_CELLS = """import json, sys
from wattzip.report import comparison_cells
comparison_cells.WRITERS[sys.argv[1]](json.loads(sys.argv[2]), json.loads(sys.argv[3]),
                                      sys.argv[4])
"""


def cells(root: Path, out: Path, rule: str, inputs: dict, params: dict,
          name: str = "") -> dict[str, Path]:
    """A table's cells as its rule (`rule`: ratio_cells, breakeven_cells, testbed_cells)
    sets them, where the tree has that rule (wattzip.report.comparison_cells)."""
    if not (root / "wattzip" / "report" / "comparison_cells.py").exists():
        return {}
    made = out / f"{rule}{'_' + name if name else ''}.csv"
    as_text = {k: [str(p) for p in v] if isinstance(v, list) else str(v)
               for k, v in inputs.items()}
    python(root, ["-c", COMPARISON_CELLS, rule, json.dumps(as_text), json.dumps(params),
                  str(made)])
    return {"cells": made}


TEXT_CELLS = """import sys
from wattzip.report import text_cells
text_cells.write(sys.argv[1], {sys.argv[1]: sys.argv[2]}, sys.argv[3])
"""


def text_cells(root: Path, out: Path, table: str) -> dict[str, Path]:
    """A table of free text's cells as rule text_cells sets them (input `cells`), where the
    tree has that rule (wattzip.report.text_cells); a tree before it reads the analysis
    table itself, which each tree's table script is handed too."""
    if not (root / "wattzip" / "report" / "text_cells.py").exists():
        return {}
    cells = out / f"{table}_cells.csv"
    python(root, ["-c", TEXT_CELLS, table, str(out / f"{table}.csv"), str(cells)])
    return {"cells": cells}


MACROS = """import json, sys
from wattzip.report.macros import macro_values, macros_tex
from wattzip.report.tables import ReportTables
inputs, params, out = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
t = ReportTables.load(inputs, params["primary"])
open(out, "w").write(macros_tex(macro_values(t, params), t.estimated))
"""


MACRO_INPUTS = ("provenance.json", "manifest.json", "plan/estimate.json")


def macros(root: Path, results: Path, out: Path, looks: int) -> None:
    """The text's macros (rule paper_macros) from this tree's tables, when the results
    hold what the text needs besides them (an idle calibration, provenance, the plan)."""
    with open(out / "summary.csv", newline="", encoding="utf-8") as f:
        summary = list(csv.DictReader(f))
    primary = next(r["setting"] for r in summary if r["primary"] == "true")
    if not all((results / p).exists() for p in (*MACRO_INPUTS, f"idle/{primary}.json")):
        return
    inputs = {name: str(out / f"{name}.csv") for name in
              ("summary", "breakeven", "correlation", "claims", "model_check")}
    inputs.update(runs=str(results / "runs.csv"), provenance=str(results / "provenance.json"),
                  manifest=str(results / "manifest.json"),
                  idle=str(results / "idle" / f"{primary}.json"),
                  estimate=str(results / "plan" / "estimate.json"),
                  table3=str(out / "reference" / "systor09_table3_ratios.csv"),
                  breakeven_originals=[str(out / "reference" / f"{reference}.csv")
                                       for reference, _, _ in BREAKEVEN.values()],
                  original_design=str(root / "paper" / "reference" / "systor09_design.csv"),
                  summaries=[str(out / "summary.csv")])
    if (results / "crosscheck.csv").exists():
        inputs["crosscheck"] = str(results / "crosscheck.csv")
    params = {"testbed": summary[0]["testbed"], "primary": primary,
              "primary_rule": "the first of the config",
              "file_size": str(json.loads((results / "manifest.json").read_text())["inputs"][0]
                               ["size_bytes"]),
              "file_types": sorted({r["file_type"] for r in summary}),
              "codecs": sorted({r["codec"] for r in summary} - {"plain"}),
              "repeats": {"design": "verdict" if looks else "paper",
                          "looks": list(range(3, 3 + 2 * looks, 2)), "min": 2, "max": 8,
                          "ci_target": 0.05},
              "repeat_design": "as measured", "drift_check": "as measured",
              "be_intervals": "as measured", "ci_target_role": "",
              "fig_dir": "figures", "study": "before-after",
              "study_description": "", "stage": "results", "testbeds": [summary[0]["testbed"]],
              "descriptions": {}, "varied_factors": [], "factor_values": {},
              "emulated_input_layouts": [], "hpc14": False, "emulated_machine": "",
              "primary_flush": "unmount", "paper_setup": None, "departures": []}
    python(root, ["-c", MACROS, json.dumps(inputs), json.dumps(params),
                  str(out / "tex" / "macros.tex")])


def build(root: Path, results: Path, out: Path, looks: int) -> Path:
    analyze(root, results, out, looks)
    tables(root, results, out)
    macros(root, results, out, looks)
    return out


# --- the differences ------------------------------------------------------------------------


def _label(row: dict, index: int) -> str:
    keys = ("setting", "file_type", "codec", "op", "metric", "claim_id", "n", "source_table")
    return "/".join(str(row[k]) for k in keys if row.get(k) not in (None, "")) or str(index)


def diff_csv(name: str, a: Path, b: Path) -> list[str]:
    with open(a, newline="", encoding="utf-8") as f:
        before = list(csv.DictReader(f))
    with open(b, newline="", encoding="utf-8") as f:
        after = list(csv.DictReader(f))
    out = []
    cols_a, cols_b = (list(rows[0]) if rows else [] for rows in (before, after))
    out += [f"{name}: column {c} added" for c in cols_b if c not in cols_a]
    out += [f"{name}: column {c} removed" for c in cols_a if c not in cols_b]
    if len(before) != len(after):
        out.append(f"{name}: {len(before)} rows before, {len(after)} after")
    for i, (x, y) in enumerate(zip(before, after, strict=False)):
        for c in cols_a:
            if c in y and x[c] != y[c]:
                out.append(f"{name}: {_label(x, i)}: {c}: {x[c]!r} -> {y[c]!r}")
    return out


def _tabular(text: str) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """A booktabs table's header, its rows by their first cell, and every other line."""
    header, rows, other = [], {}, []
    for line in text.splitlines():
        if line.endswith(r" \\") and " & " in line:
            cells = line[:-3].split(" & ")
            if not header:
                header = cells
            else:
                rows[cells[0]] = cells
        else:
            other.append(line)
    return header, rows, other


def diff_tex(name: str, a: Path, b: Path) -> list[str]:
    (ha, ra, oa), (hb, rb, ob) = _tabular(a.read_text()), _tabular(b.read_text())
    out = [f"{name}: header {ha} -> {hb}"] if ha != hb else []
    for key in sorted(set(ra) | set(rb)):
        x, y = ra.get(key), rb.get(key)
        if x is None or y is None:
            out.append(f"{name}: row {key} {'added' if x is None else 'removed'}")
            continue
        for col, cx, cy in zip(hb, x, y, strict=False):
            if cx != cy:
                out.append(f"{name}: {key} / {col}: {cx} -> {cy}")
    if oa != ob:
        out += [f"{name}: note: {x!r} -> {y!r}" for x, y in _changed_words(oa, ob)]
    return out


def _changed_words(a: list[str], b: list[str]) -> list[tuple[str, str]]:
    """The changed stretches of two texts, word by word."""
    wa, wb = " ".join(a).split(), " ".join(b).split()
    matcher = difflib.SequenceMatcher(a=wa, b=wb, autojunk=False)
    return [(" ".join(wa[i1:i2]), " ".join(wb[j1:j2]))
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def diff_macros(a: Path, b: Path) -> list[str]:
    def parse(path):
        return dict(re.findall(r"\\newcommand\{\\(\w+)\}\{(.*)\}$", path.read_text(), re.M))
    x, y = parse(a), parse(b)
    return [f"macros.tex: \\{k}: {x.get(k, '(none)')} -> {y.get(k, '(none)')}"
            for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k)]


def differences(before: Path, after: Path) -> list[str]:
    out = []
    for name in ANALYSIS_TABLES:
        out += diff_csv(f"{name}.csv", before / f"{name}.csv", after / f"{name}.csv")
    for tex in sorted((after / "tex").glob("*.tex")):
        if not (before / "tex" / tex.name).exists():
            out.append(f"{tex.name}: only after")
        elif tex.name == "macros.tex":
            out += diff_macros(before / "tex" / tex.name, tex)
        else:
            out += diff_tex(tex.name, before / "tex" / tex.name, tex)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rev", default="main", help="the revision before (default: main)")
    p.add_argument("--results", type=existing_dir, default=FIXTURE)
    p.add_argument("--looks", type=int, default=0)
    p.add_argument("--keep", type=Path, help="keep both builds here")
    a = p.parse_args(argv)
    rev = subprocess.run(["git", "rev-parse", "--short", a.rev], cwd=REPO, text=True,
                         capture_output=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        work = a.keep or Path(tmp)
        before = build(export(a.rev, work / "tree-before"), a.results.resolve(),
                       work / "before", a.looks)
        after = build(REPO, a.results.resolve(), work / "after", a.looks)
        found = differences(before, after)
    print(f"tables of {a.results} (looks {a.looks}): {rev} against the work tree: "
          f"{len(found)} difference(s)")
    for line in found:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
