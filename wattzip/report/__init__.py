"""The paper's generated text from one testbed's analysis tables: its numbers as macros,
and the passages that depend on what the study ran."""

from __future__ import annotations

from collections.abc import Mapping

from wattzip.records import check_stage, write_text_atomically
from wattzip.report import passages
from wattzip.report.macros import macro_values, macros_tex
from wattzip.report.tables import ReportTables


def write(inputs: Mapping, params: Mapping, outputs: Mapping) -> dict[str, str]:
    """Write rule paper_macros' outputs; return the macros (for its log)."""
    t = ReportTables.load(inputs, params["primary"])
    simulated = check_stage(t.runs, params["stage"])
    values = macro_values(t, params)
    texts = {
        "macros": macros_tex(values, t.estimated, simulated),
        "abstract": passages.abstract(t, params),
        "figures": passages.figure_list(params["file_types"], t.estimated),
        "factors": passages.factor_sections(t.claims, params, t.estimated),
        "testbed_list": passages.testbed_list(params["testbeds"], inputs["summaries"],
                                              params["descriptions"], simulated)
        + passages.testbeds_figure(params.get("testbeds_figure"), t.estimated),
    }
    for name, text in texts.items():
        write_text_atomically(outputs[name], text)
    return values

