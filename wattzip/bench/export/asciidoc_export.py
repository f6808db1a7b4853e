"""--export-asciidoc: hyperfine's AsciiDoc table (a cols line of alignments, a row per
command), with the markdown export's columns and footnote."""

from __future__ import annotations

from wattzip.bench.export.markdown_export import table


def render(document: dict) -> str:
    aligns, rows, footnote = table(document)
    out = f'[cols="{",".join(aligns)}"]\n|==='
    out += "".join("\n| " + " \n| ".join(cells) + " \n" for cells in rows)
    out += "|===\n"
    return out + (f"\n{footnote}\n" if footnote else "")
