"""The report's LaTeX tables, each written whole from the analysis tables: one testbed's
(its compression ratios and break-even ratios beside the originals', the claims'
verdicts, its provenance, and HPC '14's where the study compresses in the filesystem or
runs a duty cycle; rule tables_of_testbed) and every testbed's text break-even beside
the slides' machines (rule table_testbeds).

The cells are the report's cell modules' (comparison_cells, text_cells, hpc14_cells:
one formatter, wattzip.latex). Here they are ordered (the codecs as every figure orders
them, scripts/theme.R's order_codecs), laid out as booktabs tables with their notes,
and, in a rehearsal, put under the SIMULATED banner: a table says so when the rows it
is made from are simulated, read from the data, not from where it is written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from wattzip.analysis.reference import (
    DISAGREEMENTS,
    disagreement_notes,
    read_reference,
    read_with_tex,
)
from wattzip.latex import tex
from wattzip.model import layout
from wattzip.records import write_text_atomically
from wattzip.report import codec_cells, comparison_cells, hpc14_cells, legends, text_cells
from wattzip.report.tables import primary_rows, rows
from wattzip.resources import label, tool_order

FILE_TYPES_FIRST = ("text", "binary", "random", "zero")  # the paper's columns, in its order
CLAIMS_COLUMNS = (r">{\raggedright\arraybackslash}p{0.26\linewidth}"
                  r">{\raggedright\arraybackslash}p{0.12\linewidth}"
                  r">{\raggedright\arraybackslash}p{0.12\linewidth}"
                  r">{\raggedright\arraybackslash}p{0.40\linewidth}")
FILESYSTEM_HEADER = ("File", "Codec", "Ratio", r"CPU \%", "Runtime / off", "Energy (J)")
DUTY_HEADER = ("Codec", "Ratio", "Time (s)", "Power (W)", "Energy (J)", "Energy / off")
NO_HPC14 = "% no filesystem codecs and no duty cycle in this study"
NO_TEXT = "no text file in this study"  # the testbeds' table of a study without text files


@dataclass
class Table:
    """A table's LaTeX lines, and whether the rows it is made from are a rehearsal's."""

    lines: list[str]
    simulated: bool

    def text(self) -> str:
        """The table's file: a rehearsal's says SIMULATED above the table."""
        banner = ([rf"{{\color{{red!70!black}}\bfseries {tex_escape(label('simulated'))}}}"
                   r"\par\smallskip"] if self.simulated else [])
        return "\n".join(banner + self.lines) + "\n"


def tex_escape(text: str) -> str:
    """A label the tables add (a testbed's name, the banner) as LaTeX prints it; the
    cells come set by wattzip.latex."""
    text = text.replace("\\", "\0")  # a placeholder, so that its braces stay unescaped
    text = re.sub(r"([&%$#_{}])", r"\\\1", text)
    text = text.replace("~", r"\textasciitilde{}").replace("^", r"\textasciicircum{}")
    text = text.replace("<", "$<$").replace(">", "$>$")  # OT1 fonts set < and > otherwise
    return text.replace("\0", r"\textbackslash{}")


def _level(value: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def codec_order(rows: Iterable[Mapping]) -> list[str]:
    """The codecs of `rows` in the paper's order, the one of every table and figure
    (order_codecs, scripts/theme.R): plain, then by tool in the paper's order (PPMd's
    7zz as ppmd; tools it lacks after), by level (none last), then by name."""
    order = tool_order()

    def key(row: Mapping) -> tuple:
        tool = "plain" if row["codec"] == "plain" else row["tool"]
        tool = "ppmd" if tool == "7zz" else tool
        level = _level(row["level"])
        return (order.index(tool) if tool in order else len(order), math.isnan(level),
                0.0 if math.isnan(level) else level, row["codec"])

    return list(dict.fromkeys(row["codec"] for row in sorted(rows, key=key)))


def _body(cells: Iterable[Sequence[str]]) -> list[str]:
    """Each row's cells; a table without rows keeps one empty row, as its R writer set it."""
    return [" & ".join(row) + r" \\" for row in cells] or [r" \\"]


def tabular(header: Sequence[str], cells: Iterable[Sequence[str]], align: str,
            note: str = "") -> list[str]:
    """A booktabs tabular's lines, its note below it."""
    lines = [rf"\begin{{tabular}}{{{align}}}", r"\toprule", " & ".join(header) + r" \\",
             r"\midrule", *_body(cells), r"\bottomrule", r"\end{tabular}"]
    return lines + (["", rf"\par\smallskip{{\footnotesize {note}}}"] if note else [])


def _simulated(rows: Sequence[Mapping]) -> bool:
    return any(row["simulated"] for row in rows)


def by_file_type(cells: list[dict], cell_align: str, note: str) -> list[str]:
    """One row per codec in the paper's order, one column per file type (the paper's four
    first, the others by name), each cell as comparison_cells set it."""
    present = {row["file_type"] for row in cells}
    types = [t for t in FILE_TYPES_FIRST if t in present]
    types += sorted(present - set(FILE_TYPES_FIRST))
    cell = {(row["codec"], row["file_type"]): row["cell"] for row in cells}
    body = [[codec, *(cell.get((codec, t), comparison_cells.MISSING) for t in types)]
            for codec in codec_order(cells)]
    return tabular(["Tool", *types], body, "l" + cell_align * len(types), note)


def disagreements(inputs: Mapping, table: str) -> dict[tuple, str]:
    """The seeds' disagreements on one original table's cells (by codec, file type and
    metric), read from the tables they name (each an input by its name)."""
    _, declared = read_reference(inputs[DISAGREEMENTS])
    names = {d[k] for d in declared if d["source_table"] == table
             for k in ("source_table", "other_table")}
    return disagreement_notes(declared, {n: read_reference(inputs[n])[1] for n in names},
                              table)


def ratios(inputs: Mapping) -> Table:
    """The compressed writes' ratios beside SYSTOR '09 Table 3 (SYSTOR '11 Table 1 where
    levels ran)."""
    names = ["systor09_table3_ratios", "systor11_table1_ratios"]
    originals = [read_with_tex(inputs[name]) for name in names]
    disagree = {k: v for name in reversed(names) for k, v in disagreements(inputs,
                                                                           name).items()}
    cells = comparison_cells.ratio_rows(primary_rows(inputs["summary"]), originals, disagree)
    return Table(by_file_type(cells, "r", comparison_cells.ratio_note(cells)),
                 _simulated(cells))


def breakeven(inputs: Mapping, original: str) -> Table:
    """The break-even ratios beside one original table (layout.BREAKEVEN_ORIGINALS)."""
    reference, metrics, title = layout.BREAKEVEN_ORIGINALS[original]
    table = primary_rows(inputs["breakeven"])
    cells = comparison_cells.breakeven_rows(table, rows(inputs["summary"]),
                                            read_with_tex(inputs[reference]), metrics,
                                            disagreements(inputs, reference))
    note = comparison_cells.breakeven_note(table, metrics, title, cells)
    return Table(by_file_type(cells, "c", note), _simulated(cells))


def claims(inputs: Mapping) -> Table:
    """The original papers' claims and their verdicts on this testbed."""
    cells = text_cells.claim_rows(rows(inputs["claims"]))
    note = cells[0]["note"] if cells else ""
    lines = [rf"\begin{{longtable}}{{{CLAIMS_COLUMNS}}}",
             r"\toprule Claim & Where & Verdict & Numbers \\ \midrule \endhead",
             *_body([r["claim"], r["source"], r["verdict"], r["evidence"]] for r in cells),
             r"\bottomrule", r"\end{longtable}",
             # the star's legend, where a verdict rests on estimated energy
             rf"{{\footnotesize {note}}}" if note else ""]
    return Table(lines, _simulated(cells))


def provenance(inputs: Mapping) -> Table:
    """The testbed: hardware, software, meter and the tools' versions."""
    cells = text_cells.provenance_rows(rows(inputs["provenance"]))
    return Table(tabular(["Property", "Value"], ([r["key"], r["value"]] for r in cells),
                         r"lp{0.62\linewidth}"), _simulated(cells))


def _float(part: str, notes: Mapping, header: Sequence[str], cells: list[list[str]],
           align: str) -> list[str]:
    return [r"\begin{table}[H]\centering\small", rf"\caption{{{notes[part]['caption']}}}",
            *tabular(header, cells, align, notes[part]["text"]), r"\end{table}"]


def hpc14(inputs: Mapping, duty_codecs: Iterable[str]) -> Table:
    """HPC '14's tables from the summary's primary rows that have runs."""
    summary = [r for r in primary_rows(inputs["summary"]) if int(r["n"]) > 0]
    originals = hpc14_cells.originals(inputs["hpc14_table2_patterns"],
                                      inputs["hpc14_table3_write_only"],
                                      inputs["hpc14_table4_write_compute"])
    return hpc14_tables(summary, duty_codecs, originals)


def hpc14_tables(summary: list[dict], duty_codecs: Iterable[str],
                 originals: Mapping[str, str]) -> Table:
    """HPC '14 beside the originals (`originals`: hpc14_cells.originals): compression in
    the filesystem (Tables I and II) and write phases between compute phases (Tables III
    and IV), each codec against compression off."""
    filesystem = hpc14_cells.filesystem_rows(summary, duty_codecs)
    duty = hpc14_cells.duty_rows(summary)
    notes = {n["part"]: n for n in hpc14_cells.notes_rows(originals, filesystem, duty)}
    lines: list[str] = []
    if filesystem:
        order = codec_order(filesystem)
        shown = sorted(filesystem, key=lambda r: (r["file_type"], order.index(r["codec"])))
        lines += _float("filesystem", notes, FILESYSTEM_HEADER,
                        [[r["file_type"], r["codec"], r["ratio"], r["cpu_percent"],
                          r["runtime_vs_off"], r["energy_j"]] for r in shown], "llrrrr")
    if duty:
        order = codec_order(duty)
        shown = sorted(duty, key=lambda r: order.index(r["codec"]))
        lines += _float("duty", notes, DUTY_HEADER,
                        [[r["codec"], r["ratio"], r["time_s"], r["power_w"], r["energy_j"],
                          r["energy_vs_off"]] for r in shown], "lrrrrr")
    return Table(lines or [NO_HPC14], _simulated(filesystem[:1] + duty[:1]))


SPLIT_HEADER = ("File", "Codec", "Operation", "T (s)", r"codec \%", "I/O (s)", "E (J)",
                r"codec \%", "I/O (J)")
NO_CODEC_ONLY = (r"This study measured no codec-only operations (config \texttt{codec\_only}), "
                 "so nothing splits a compress-write into its codec and its I/O.")
SPLIT_NOTE = (r"Each operation's mean time T and energy E; codec \%: the share of the codec "
              "alone (its codec-only operation, from the page cache to /dev/null, no flush); "
              r"I/O: the rest, the difference of the two means, with its Welch interval at "
              r"\ConfidencePct{} in brackets.")


def codec(inputs: Mapping) -> Table:
    """The codec's own cost: each compress-write and decompress-read split into the codec
    and its I/O (when the study measured codec-only operations), and the table in
    lzbench's shape, its speeds and its joules per GB."""
    split = codec_cells.split_rows(rows(inputs["codec_io"]))
    lz = codec_cells.lzbench_rows(rows(inputs["lzbench"]))
    lines: list[str] = []
    if split:
        order = codec_order(split)
        shown = sorted(split, key=lambda r: (r["file_type"], order.index(r["codec"]), r["op"]))
        note = SPLIT_NOTE + (" " + legends.ESTIMATED if any(r["estimated"] for r in split)
                             else "")
        lines += [r"\begin{table}[H]\centering\small",
                  r"\caption{Each codec's operations split into the codec alone and its I/O.}",
                  r"\label{tab:codec-io}",
                  *tabular(SPLIT_HEADER, ([r["file_type"], r["codec"], r["op"], r["T_total"],
                                           r["T_share"], r["T_io"], r["E_total"], r["E_share"],
                                           r["E_io"]] for r in shown), "lllrrrrrr", note),
                  r"\end{table}"]
    else:
        lines += [NO_CODEC_ONLY, ""]
    order = codec_order(lz)
    shown = sorted(lz, key=lambda r: (r["file_type"], order.index(r["codec"])))
    note = codec_cells.lzbench_note(lz, r"\HalfWidthConfidencePct{}", tex)
    for unit, what in (("mb_s", "speed (MB/s)"), ("j_per_gb", "energy (J/GB)")):
        lines += [r"\begin{table}[H]\centering\scriptsize",
                  rf"\caption{{In lzbench's shape: ratio and {what}, of the codec alone and "
                  r"with its I/O.}",
                  rf"\label{{tab:lzbench-{unit.replace('_', '-')}}}",
                  *tabular(["File", "Codec", "Ratio", *codec_cells.COLUMNS.values()],
                           ([r["file_type"], r["codec"], r["ratio"],
                             *(r[f"{k}_{unit}"] for k in codec_cells.COLUMNS)] for r in shown),
                           "llrrrrr", note if unit == "j_per_gb" else ""),
                  r"\end{table}"]
    return Table(lines, _simulated(split[:1] + lz[:1]))


def testbeds(inputs: Mapping) -> Table:
    """Every testbed's text break-even (E / T) beside the slides' server, desktop and
    laptop: the columns in the order the cells come, the codecs in the paper's."""
    summaries = [rows(path) for path in inputs["summary"]]
    cells = comparison_cells.testbed_rows([rows(path) for path in inputs["breakeven"]],
                                          summaries,
                                          {path: read_with_tex(path) for path in
                                           inputs["slides"]})
    # A study without text files is a rehearsal's by its summaries.
    simulated = _simulated(cells) or any(
        table[0].get("simulated", "").lower() == "true" for table in summaries if table)
    if not cells:  # a study without text files (HPC '14 patterns)
        return Table(tabular(["Tool"], [[NO_TEXT]], "l"), simulated)
    columns = list(dict.fromkeys(row["testbed"] for row in cells))
    cell = {(row["codec"], row["testbed"]): row["cell"] for row in cells}
    first = {}
    for row in cells:  # each codec's tool and level, by which it is ordered
        first.setdefault(row["codec"], row)
    body = [[codec, *(cell.get((codec, c), comparison_cells.MISSING) for c in columns)]
            for codec in codec_order(first.values())]
    return Table(tabular(["Tool", *map(tex_escape, columns)], body, "l" + "c" * len(columns),
                         cells[0]["note"]), simulated)


def builders(duty_codecs: Iterable[str]) -> dict[str, Callable[[Mapping], Table]]:
    """Each table of a testbed by its name (its file, generated/<testbed>/<name>.tex):
    the one list of them, which the workflow's lookups take (names)."""
    out: dict[str, Callable[[Mapping], Table]] = {
        "ratios": ratios, "claims": claims, "provenance": provenance, "codec": codec,
        "hpc14": lambda inputs: hpc14(inputs, duty_codecs)}
    for original in layout.BREAKEVEN_ORIGINALS:
        out[f"breakeven_{original}"] = lambda inputs, o=original: breakeven(inputs, o)
    return out


def names(study) -> list[str]:
    """The tables of a testbed of `study` (rule tables_of_testbed's outputs): every
    builder's, HPC '14's only where the study has its workloads."""
    return [name for name in builders(()) if name != "hpc14" or layout.has_hpc14(study)]


def write_testbed(inputs: Mapping, params: Mapping, outputs: Mapping) -> list[str]:
    """Rule tables_of_testbed: each of `outputs` (a table's name: its path) from the
    testbed's analysis tables and the originals' (`inputs`); the paths written."""
    make = builders(params["duty_codecs"])
    for name, path in outputs.items():
        write_text_atomically(path, make[name](inputs).text())
    return [str(path) for path in outputs.values()]


def write_testbeds(inputs: Mapping, params: Mapping, outputs: Mapping) -> list[str]:
    """Rule table_testbeds: every testbed's text break-even beside the slides'."""
    write_text_atomically(outputs["testbeds"], testbeds(inputs).text())
    return [str(outputs["testbeds"])]


WRITERS = {"tables_of_testbed": write_testbed, "table_testbeds": write_testbeds}
