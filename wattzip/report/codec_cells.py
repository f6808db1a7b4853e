"""The cells of the codec's own cost (wattzip.analysis.codec_cost), set by the report's
formatters (wattzip.latex): the split of each compress-write and decompress-read into the
codec alone and its I/O, and the table in lzbench's shape, as the report's LaTeX tables
(wattzip.report.tex_tables lays them out) and as Markdown beside runs.csv (lzbench.md), to
paste beside lzbench's README tables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from wattzip.latex import fixed_tex, interval_tex, number, tex
from wattzip.resources import label

# The lzbench-shaped columns (wattzip.analysis.codec_cost.LZBENCH_COLUMNS), as headed.
COLUMNS = {"compress_codec": "Compr. codec", "compress_io": "Compr. with I/O",
           "decompress_codec": "Decompr. codec", "decompress_io": "Decompr. with I/O"}
NOT_MEASURED = "--"


def _true(value) -> bool:
    return str(value).lower() == "true"


def lzbench_rows(table: Sequence[Mapping], space: str = r"\,") -> list[dict]:
    """The primary setting's rows of lzbench.csv as cells: codec, file type, ratio, and
    per column its MB/s and J/GB, each "mean [lo, hi]" (`space` before the bracket: LaTeX's
    thin space, or Markdown's plain one)."""
    out = []
    for row in table:
        if not _true(row["primary"]):
            continue
        cells = {"codec": row["codec"], "tool": row["tool"], "level": row["level"],
                 "file_type": row["file_type"],
                 "ratio": fixed_tex(row["compression_ratio"], 2),
                 "estimated": _true(row["estimated"]), "simulated": _true(row.get("simulated"))}
        for column in COLUMNS:
            for unit, digits in (("mb_s", 1), ("j_per_gb", 1)):
                stem = f"{column}_{unit}"
                cells[stem] = interval_tex(row[stem], row[f"{stem}_lo"], row[f"{stem}_hi"],
                                           digits, space)
        out.append(cells)
    return out


def lzbench_note(cells: Sequence[Mapping], confidence: str,
                 text: Callable[[str], str] = str) -> str:
    """What the lzbench-shaped table's numbers are, its words set by `text` (tex for the
    report, as they are for Markdown) around `confidence` (the report's macro, or the
    level itself)."""
    said = [text("Speeds in MB/s: input MB (10^6 bytes) over the mean time; energy in J "
                 "per GB (10^9 bytes) of input. In brackets the interval the mean's "
                 "half-width at ") + confidence + text(
            " gives (none where one run). Codec: the codec alone, from the page cache to "
            "/dev/null, no flush (compress-only, decompress-only), as lzbench measures in "
            "memory; with I/O: compress-write and decompress-read, cold caches and the flush "
            "inside the region. -- : not measured (config codec_only off, or a tool that "
            "writes its own file).")]
    if any(c["estimated"] for c in cells):
        said.append(text(label("estimated") + "."))
    return " ".join(said)


def lzbench_markdown(table: Sequence[Mapping], confidence: str) -> str:
    """lzbench.md: the primary setting's rows as a Markdown table, its note below; a
    rehearsal's says SIMULATED above it."""
    cells = lzbench_rows(table, " ")
    lines = []
    if any(c["simulated"] for c in cells):
        lines += [f"**{label('simulated')}**", ""]
    testbeds = sorted({r["testbed"] for r in table})
    lines.append(f"# lzbench's columns, with joules: testbed {', '.join(testbeds)}")
    lines += ["", "| Codec | File | Ratio | " + " | ".join(
        f"{h} MB/s" for h in COLUMNS.values()) + " | " + " | ".join(
        f"{h} J/GB" for h in COLUMNS.values()) + " |",
        "|---|---|" + "---:|" * (1 + 2 * len(COLUMNS))]
    for c in cells:
        lines.append(f"| {c['codec']} | {c['file_type']} | {c['ratio']} | " + " | ".join(
            c[f"{k}_mb_s"] for k in COLUMNS) + " | " + " | ".join(
            c[f"{k}_j_per_gb"] for k in COLUMNS) + " |")
    return "\n".join([*lines, "", lzbench_note(cells, confidence), ""])


def split_rows(table: Sequence[Mapping]) -> list[dict]:
    """The primary setting's rows of codec_io.csv as cells: file type, codec, operation,
    the codec's share of its time and energy, and the I/O's part of each with its
    interval."""
    out = []
    for row in table:
        if not _true(row["primary"]):
            continue
        share = {m: fixed_tex(number(row[f"{m}_codec_share"]) * 100, 0) for m in ("T", "E")}
        out.append({"codec": row["codec"], "tool": row["tool"], "level": row["level"],
                    "file_type": tex(row["file_type"]), "op": tex(row["op"]),
                    "estimated": _true(row["estimated"]),
                    "simulated": _true(row.get("simulated")),
                    **{f"{m}_share": share[m] for m in share},
                    **{f"{m}_io": interval_tex(row[f"{m}_io"], row[f"{m}_io_lo"],
                                               row[f"{m}_io_hi"], digits)
                       for m, digits in (("T", 3), ("E", 2))},
                    **{f"{m}_total": fixed_tex(row[f"{m}_total"], digits)
                       for m, digits in (("T", 3), ("E", 2))}})
    return out
