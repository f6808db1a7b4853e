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


def ratio_rows(summary: list[dict], originals: Sequence[list[dict]]) -> list[dict]:
    """The compressed writes' ratios, each beside the first original's that has it."""
    paper: dict[tuple, str] = {}
    for table in originals:
        for row in table:
            paper.setdefault((row["codec"], row["file_type"]), row["display_tex"])
    return [{"codec": r["codec"], "tool": r["tool"], "level": r["level"],
             "file_type": r["file_type"],
             "cell": beside_original(r["compression_ratio_tex"],
                                     paper.get((r["codec"], r["file_type"]))),
             "simulated": r.get("simulated") == "true"}
            for r in summary if r["op"] == "compress-write" and int(r["n"]) > 0]


def breakeven_rows(breakeven: list[dict], summary: list[dict], original: list[dict],
                   metrics: Sequence[str]) -> list[dict]:
    """Each compressing codec's pair of break-even cells as the analysis set them (cell_tex:
    with its dagger where an estimated verdict depends on the model), beside the
    original's pair."""
    mine = _pairs(breakeven, "cell_tex", metrics)
    paper = _pairs(original, "display_tex", metrics)
    tools = _tools(r for r in summary if r["codec"] != "plain")
    return [{"codec": codec, **tools[codec], "file_type": file_type,
             "cell": beside_original(cell, paper.get((codec, file_type))),
             "simulated": breakeven[0].get("simulated") == "true"}
            for (codec, file_type), cell in sorted(mine.items()) if codec in tools]


def breakeven_note(breakeven: list[dict], metrics: Sequence[str], original: str) -> str:
    """A break-even table's note: what its cells are, the legend of their marks at the
    levels the analysis decided them, and where energy is estimated, the dagger's."""
    estimated = any(r["estimated"] == "true" for r in breakeven)
    levels = breakeven[0]["levels_tex"] if breakeven else ""
    return legends.note(rf"$n_{{be}}$ for {' / '.join(metrics)} on this testbed; the "
                        rf"original ({tex(original)}) in parentheses.",
                        legends.breakeven_marks(levels), legends.estimated_cells(estimated))


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
