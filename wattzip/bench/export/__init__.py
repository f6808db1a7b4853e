"""Exporters, one module each, chosen by name: hyperfine's --export-json / -csv /
-markdown / -asciidoc / -orgmode, each with the energy beside the time."""

from __future__ import annotations

from wattzip.bench.export import (
    asciidoc_export,
    csv_export,
    json_export,
    markdown_export,
    orgmode_export,
)

EXPORTERS = {"json": json_export.render, "csv": csv_export.render,
             "markdown": markdown_export.render, "asciidoc": asciidoc_export.render,
             "orgmode": orgmode_export.render}


def write(kind: str, path: str, document: dict) -> None:
    """Write one export atomically (a reader never sees half a table)."""
    from wattzip import records

    records.write_text_atomically(path, EXPORTERS[kind](document))
