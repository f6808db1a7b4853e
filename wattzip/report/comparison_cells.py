"""The cells of the tables that set this testbed's results beside an original's: the
compression ratios (SYSTOR '09 Table 3, SYSTOR '11 Table 1), the break-even ratios
(Tables 4 and 5, the slides) and every testbed's text break-even beside the slides'
machines. Each cell is composed here, from the cells the analysis set and the originals'
(wattzip/data/reference/, set by the same formatter): a pair of metrics as "E / T", and
the original's value in parentheses; and each table's note, with the legends of its
marks (wattzip.report.legends). wattzip.report.tex_tables orders and lays them out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from wattzip.analysis import agreement
from wattzip.latex import tex
from wattzip.report import legends

MISSING = "--"  # a cell the table has no value for
ESTIMATED_LABEL = " (ESTIMATED)"  # a testbed's column whose energy is estimated
RATIO_NOTE = ("This testbed's ratio, the original paper's in parentheses (SYSTOR '09 Table 3; "
              "SYSTOR '11 Table 1 for other levels).")
TESTBED_NOTE = ("Text file, $n_{be}^{E}$ / $n_{be}^{T}$. The last columns are the SYSTOR '09 "
                "slides' server, desktop and laptop.")


def metric_pair(cells: Mapping[str, str], metrics: Sequence[str]) -> str:
    """The cell of two metrics of one codec and file, in the order the table names them."""
    return " / ".join(cells.get(metric, MISSING) for metric in metrics)


def beside_original(cell: str, original: str | None) -> str:
    """This testbed's cell with the original's in parentheses, where the original has one."""
    return cell if original is None else rf"{cell} {{\scriptsize({original})}}"


def _pairs(table: Iterable[Mapping], column: str, metrics: Sequence[str],
           key=("codec", "file_type")) -> dict[tuple, str]:
    """The cells of `metrics` of each `key` (a codec and file), composed by metric_pair."""
    cells: dict[tuple, dict[str, str]] = {}
    for row in table:
        if row["metric"] in metrics:
            cells.setdefault(tuple(row[k] for k in key), {})[row["metric"]] = row[column]
    return {k: metric_pair(v, metrics) for k, v in cells.items()}


def _tools(summaries: Iterable[Mapping]) -> dict[str, dict]:
    """Each codec's tool and level, by which the tables order the codecs: the first
    summary row's of the codec."""
    tools: dict[str, dict] = {}
    for row in summaries:
        tools.setdefault(row["codec"], {"tool": row["tool"], "level": row["level"]})
    return tools


def _ratio_agreement(row: Mapping, original: Mapping | None) -> agreement.Agreement | None:
    return None if original is None else agreement.ratio_agreement(
        original["display"], row["compression_ratio"])


def _contradicted(original: Iterable[Mapping], disagree: Mapping[tuple, str],
                  metric: str | None = None) -> list[dict]:
    """The original's rows, the cells another seed contradicts (`disagree`: by codec,
    file type and metric) marked after their display_tex and carrying what it says."""
    out = []
    for row in original:
        note = disagree.get((row["codec"], row["file_type"], metric or row["metric"]))
        out.append({**row, "display_tex": row["display_tex"]
                    + legends.SEED_DISAGREEMENT_TEX, "disagreement": note} if note
                   else dict(row))
    return out


def ratio_rows(summary: list[dict], originals: Sequence[list[dict]],
               disagree: Mapping[tuple, str] | None = None) -> list[dict]:
    """The compressed writes' ratios, each with its agreement's mark beside the first
    original's that has it (agreement: None where no original has it), the original's
    marked where another seed contradicts it (`disagree`: by codec, file type and CR)."""
    paper: dict[tuple, Mapping] = {}
    for table in originals:
        for row in _contradicted(table, disagree or {}, "CR"):
            paper.setdefault((row["codec"], row["file_type"]), row)
    out = []
    for r in summary:
        if r["op"] != "compress-write" or int(r["n"]) <= 0:
            continue
        original = paper.get((r["codec"], r["file_type"]))
        agreed = _ratio_agreement(r, original)
        out.append({"codec": r["codec"], "tool": r["tool"], "level": r["level"],
                    "file_type": r["file_type"],
                    "cell": beside_original(
                        r["compression_ratio_tex"] + (agreed.mark_tex if agreed else ""),
                        original["display_tex"] if original else None),
                    "agreements": [agreed] if agreed else [],
                    "disagreements": [original["disagreement"]]
                    if original and original.get("disagreement") else [],
                    "simulated": r.get("simulated") == "true"})
    return out


def disagreements_of(cells: Iterable[Mapping]) -> list[str]:
    """What another seed says of each original's cell a table sets (ratio_rows,
    breakeven_rows)."""
    return [d for cell in cells for d in cell.get("disagreements", [])]


def ratio_note(cells: Sequence[Mapping]) -> str:
    """The ratio table's note: what its cells are, the agreements' legend and count, and
    the seeds' disagreements on its originals."""
    return legends.note(RATIO_NOTE, legends.agreement_marks(agreements_of(cells)),
                        legends.seed_disagreements(disagreements_of(cells)))


def agreements_of(cells: Iterable[Mapping]) -> list[agreement.Agreement]:
    """Every agreement of a table's cells (ratio_rows, breakeven_rows)."""
    return [a for cell in cells for a in cell.get("agreements", [])]


def _marked(breakeven: Iterable[Mapping], original: Iterable[Mapping],
            metrics: Sequence[str]) -> tuple[list[dict], dict[tuple, list]]:
    """The break-even rows with their agreement's mark after cell_tex where the original
    has the cell, and the agreements by (codec, file type)."""
    paper = {(r["codec"], r["file_type"], r["metric"]): r["display"] for r in original}
    rows, agreed = [], {}
    for row in breakeven:
        display = paper.get((row["codec"], row["file_type"], row["metric"]))
        if display is None or row["metric"] not in metrics:
            rows.append(dict(row))
            continue
        a = agreement.breakeven_agreement(display, row["kind"], row["value"], row["lo"],
                                          row["hi"], row["decided"])
        agreed.setdefault((row["codec"], row["file_type"]), []).append(a)
        rows.append({**row, "cell_tex": row["cell_tex"] + a.mark_tex})
    return rows, agreed


def breakeven_rows(breakeven: list[dict], summary: list[dict], original: list[dict],
                   metrics: Sequence[str],
                   disagree: Mapping[tuple, str] | None = None) -> list[dict]:
    """Each compressing codec's pair of break-even cells as the analysis set them (cell_tex:
    with its dagger where an estimated verdict depends on the model), beside the
    original's pair, marked where another seed contradicts it (`disagree`: by codec, file
    type and metric)."""
    marked, agreed = _marked(breakeven, original, metrics)
    mine = _pairs(marked, "cell_tex", metrics)
    contradicted = _contradicted(original, disagree or {})
    paper = _pairs(contradicted, "display_tex", metrics)
    said = {}
    for row in contradicted:
        if row.get("disagreement") and row["metric"] in metrics:
            said.setdefault((row["codec"], row["file_type"]), []).append(row["disagreement"])
    tools = _tools(r for r in summary if r["codec"] != "plain")
    return [{"codec": codec, **tools[codec], "file_type": file_type,
             "cell": beside_original(cell, paper.get((codec, file_type))),
             "agreements": agreed.get((codec, file_type), []),
             "disagreements": said.get((codec, file_type), []),
             "simulated": breakeven[0].get("simulated") == "true"}
            for (codec, file_type), cell in sorted(mine.items()) if codec in tools]


def breakeven_note(breakeven: list[dict], metrics: Sequence[str], original: str,
                   cells: Sequence[Mapping] = ()) -> str:
    """A break-even table's note: what its cells are, the legend of their marks at the
    levels the analysis decided them, the agreements' legend and count (of `cells`,
    breakeven_rows'), and where energy is estimated, the dagger's."""
    estimated = any(r["estimated"] == "true" for r in breakeven)
    levels = breakeven[0]["levels_tex"] if breakeven else ""
    return legends.note(rf"$n_{{be}}$ for {' / '.join(metrics)} on this testbed; the "
                        rf"original ({tex(original)}) in parentheses.",
                        legends.breakeven_marks(levels),
                        legends.agreement_marks(agreements_of(cells)),
                        legends.seed_disagreements(disagreements_of(cells)),
                        legends.estimated_cells(estimated))


def _slides_machine(path: str) -> str:
    """The slides' machine from its table's name (…_breakeven_server.csv: server)."""
    return re.sub(r".*_([a-z]+)\.csv$", r"\1", Path(path).name)


def testbed_rows(breakevens: Sequence[list[dict]], summaries: Sequence[list[dict]],
                 slides: Mapping[str, list[dict]]) -> list[dict]:
    """Every testbed's text break-even (E / T, its column labelled ESTIMATED where its
    energy is), then the slides' machines', for the codecs the testbeds ran. The columns
    come in the order of their names, the slides' last."""
    text = [r for table in breakevens for r in table
            if r["file_type"] == "text" and r["primary"] == "true"]
    estimated = {r["testbed"] for r in text if r["estimated"] == "true"}
    tools = _tools(r for table in summaries for r in table)
    codecs = {r["codec"] for r in text} & tools.keys()
    simulated = any(r.get("simulated") == "true" for r in text)
    label = {r["testbed"]: r["testbed"] + (ESTIMATED_LABEL if r["testbed"] in estimated else "")
             for r in text}
    mine = _pairs(({**r, "testbed": label[r["testbed"]]} for r in text), "cell_tex",
                  ("E", "T"), key=("testbed", "codec"))
    out = [{"testbed": testbed, "codec": codec, "cell": cell}
           for (testbed, codec), cell in sorted(mine.items())]
    for path, table in slides.items():
        paper = _pairs((r for r in table if r["file_type"] == "text"), "display_tex",
                       ("E", "T"), key=("codec",))
        out += [{"testbed": f"paper {_slides_machine(path)}", "codec": codec, "cell": cell}
                for (codec,), cell in sorted(paper.items())]
    note = legends.note(TESTBED_NOTE, legends.estimated_cells(bool(estimated)))
    return [{**row, **tools[row["codec"]], "note": note, "simulated": simulated}
            for row in out if row["codec"] in codecs]
