"""Every number of the paper's text as a LaTeX macro, computed from the analysis tables.

Nothing in the text is typed by hand; when the energy is estimated the macros turn on
the first page's banner (\\ifestimated).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from wattzip.analysis.agreement import breakeven_agreement, count_text, ratio_agreement
from wattzip.analysis.analysis_options import AnalysisOptions, breakeven_levels, percent
from wattzip.analysis.breakeven import format_ratio
from wattzip.analysis.pareto import PARETO_READS
from wattzip.analysis.robustness import median_abs_error_pct
from wattzip.errors import RecordError
from wattzip.latex import display_tex, fixed_tex, tex
from wattzip.meters.coefficients import extremes
from wattzip.model.layout import BREAKEVEN_ORIGINALS
from wattzip.records import measured_span
from wattzip.report import legends
from wattzip.report.tables import ReportTables
from wattzip.report.text_cells import NOT_COMPARABLE
from wattzip.run_record import count_failed
from wattzip.units import parse_size
from wattzip.workload import codec_registry


def original(table: list[dict], file_type: str, codec: str, metric: str | None = None) -> str:
    """A cell of an original paper's table, as the paper printed it."""
    for r in table:
        if (r["file_type"], r["codec"]) == (file_type, codec) and metric in (None, r.get("metric")):
            return display_tex(r["display"])
    return "--"


def breakeven_cell(t: ReportTables, file_type: str, codec: str, metric: str = "E") -> str:
    for b in t.breakeven:
        if (b["file_type"], b["codec"], b["metric"]) == (file_type, codec, metric):
            return display_tex(b["display"])
    return "--"


def compression_ratio(t: ReportTables, file_type: str, codec: str) -> str:
    for s in t.summary:
        if (s["file_type"], s["codec"], s["op"]) == (file_type, codec, "compress-write"):
            return display_tex(format_ratio(float(s["compression_ratio"])))
    return "--"


AGREEMENT_MACROS = {"server": "AgreementTableFour", "desktop": "AgreementTableFive",
                    "slides_server": "AgreementSlidesServer",
                    "slides_desktop": "AgreementSlidesDesktop",
                    "slides_laptop": "AgreementSlidesLaptop"}  # by layout.BREAKEVEN_ORIGINALS


def agreement_counts(t: ReportTables) -> dict[str, str]:
    """How many of SYSTOR '09 Table 3's cells and of each break-even original's (Tables 4
    and 5, the talk's slides) this testbed's agree with in magnitude and in kind
    (wattzip.analysis.agreement), as the tables mark them."""
    ratios = {(s["file_type"], s["codec"]): s for s in t.summary
              if s["op"] == "compress-write" and int(s["n"]) > 0}
    cells = {(b["file_type"], b["codec"], b["metric"]): b for b in t.breakeven}
    table3 = [ratio_agreement(r["display"], ratios[(r["file_type"], r["codec"])]
                              ["compression_ratio"])
              for r in t.table3 if (r["file_type"], r["codec"]) in ratios]
    out = {"AgreementTableThree": tex(count_text(table3)),
           "SeedDisagreementMark": legends.SEED_DISAGREEMENT_TEX}
    for original, (reference, _, _) in BREAKEVEN_ORIGINALS.items():
        agreed = []
        for r in t.breakeven_originals[reference]:
            b = cells.get((r["file_type"], r["codec"], r["metric"]))
            if b is not None:
                agreed.append(breakeven_agreement(r["display"], b["kind"], b["value"],
                                                  b["lo"], b["hi"], b["decided"]))
        out[AGREEMENT_MACROS[original]] = tex(count_text(agreed))
    return out


def throughput_mib_s(t: ReportTables, op: str) -> str:
    """Mean plain-I/O rate over the file types: what the target disk did here."""
    rates = [int(s["input_bytes"]) / float(s["mean_elapsed_s"]) / 2**20 for s in t.summary
             if s["op"] == op and s["codec"] == "plain" and float(s["mean_elapsed_s"]) > 0]
    return fixed_tex(sum(rates) / len(rates) if rates else None, 0)


def input_sources(manifest: dict) -> str:
    """Where each file type's content came from (Debian packages, a corpus, a generator)."""
    out = []
    for entry in manifest["inputs"]:
        for src in entry.get("sources", []):
            if "package" in src:
                out.append(f"{entry['file_type']}: Debian {src['package']} {src.get('version')}")
            elif "source" in src and "files" in src:
                out.append(f"{entry['file_type']}: {src['source']} ({src['files']} files)")
            elif "source" in src:
                out.append(f"{entry['file_type']}: {src['source']}")
    return "; ".join(out)


def model_coefficients(t: ReportTables) -> tuple[str, str]:
    """The power model's row as the runs recorded it, and the coefficient table's extremes."""
    model_runs = [r for r in t.runs if r.get("model_row")]
    if model_runs:
        r0 = model_runs[0]
        text = (f"{r0['model_row']} ({r0['model_how']}), "
                f"{float(r0['model_min_w_per_thread']):.2f}--"
                f"{float(r0['model_max_w_per_thread']):.2f} W per thread $\\times$ "
                f"{r0['model_threads']} threads, from {tex(r0['model_source'])}")
    else:
        text = "not recorded with these runs"
    low, high = extremes(int(float(model_runs[0]["model_threads"])) if model_runs else 1)
    span = tex(f"{low.row}, {low.min_w_per_thread:.2f}-{low.max_w_per_thread:.2f} W; "
               f"{high.row}, {high.min_w_per_thread:.2f}-{high.max_w_per_thread:.2f} W")
    return text, span


def model_check(t: ReportTables) -> str:
    checked = [r for r in t.model_check if r.get("setting") not in (None, "", "all")]
    if not checked:
        return ""
    return (f"Beside the {tex(checked[0]['meter_source'])} meter, the model's estimate "
            f"of the same {len(checked)} runs was off by "
            f"{median_abs_error_pct(checked):.0f}\\% (median of the absolute errors; "
            "every run in model\\_check.csv).")


def idle_interval(idle: dict) -> dict[str, str]:
    """The idle power's interval and why its calibration stopped ('--' and '' for a
    calibration of one window, or one made before calibrations stopped on it)."""
    half, confidence = idle.get("half_width_w"), idle.get("confidence")
    return {
        "IdleHalfWidthW": fixed_tex(half, 2),
        "IdleConfidencePct": "--" if confidence is None else f"{percent(confidence)}\\%",
        "IdleStop": tex(idle.get("stopped") or "as many as configured"),
    }


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}\\,min"


def measured_dates(first: dt.datetime | None, last: dt.datetime | None) -> str:
    """The days the runs were measured on (UTC), the report's date: the same runs build
    the same PDF, whatever day it is built."""
    if first is None:
        return "--"
    days = [d.astimezone(dt.UTC).date().isoformat() for d in (first, last)]
    return days[0] if days[0] == days[1] else f"{days[0]} to {days[1]}"


def claim_counts(t: ReportTables) -> dict[str, int]:
    verdicts = [c["verdict"] for c in t.claims]
    apart = sum(v.startswith(NOT_COMPARABLE) for v in verdicts)
    return {"ClaimsTotal": len(verdicts), "ClaimsHold": verdicts.count("holds"),
            "ClaimsRefuted": verdicts.count("refuted"),
            "ClaimsUntestable": sum(v.startswith("not testable") for v in verdicts),
            # Energy claims a meter that sees no disk cannot set beside the papers'.
            "ClaimsNotComparable": (f" {apart} energy claim{'s are' if apart != 1 else ' is'}"
                                    " not comparable with the papers': the meter sees no "
                                    "disk.") if apart else ""}


def crosscheck(t: ReportTables) -> dict[str, str]:
    ratios = [float(c["ratio_hyperfine_to_harness"]) for c in t.crosscheck
              if c["ratio_hyperfine_to_harness"] not in ("", "nan")]
    unconditioned = sorted({c["not_compared"] for c in t.crosscheck if c.get("not_compared")})
    return {
        "CrosscheckRange": f"{min(ratios):.2f}--{max(ratios):.2f}" if ratios else "--",
        "CrosscheckCount": str(len(ratios)),
        "CrosscheckNote": tex("; ".join(unconditioned) + " (hyperfine runs on a plain "
                              "directory with the machine as it is), so no command was "
                              "compared" if unconditioned else ""),
    }


def confidence_levels(t: ReportTables, params: Mapping) -> dict[str, str]:
    """Every confidence level the text states, from the study's analysis options; refused
    when the break-even table was decided at other levels (an analysis of another config)."""
    options = AnalysisOptions.of_study(params["repeats"])
    levels = tex(breakeven_levels(options))
    stale = {b["levels_tex"] for b in t.breakeven if b.get("levels_tex") != levels}
    if stale:
        raise RecordError(f"the break-even table was decided at other levels ({sorted(stale)}) "
                          f"than this study's ({levels}): run the analysis again")
    return {"ConfidencePct": f"{percent(options.confidence)}\\%",
            # the summary's half-widths are at the analysis's confidence (cell_summary)
            "HalfWidthConfidencePct": f"{percent(options.confidence)}\\%",
            "BeDifferenceConfidencePct": f"{percent(options.difference_confidence)}\\%",
            "BeJointConfidencePct": f"{percent(options.look_confidence)}\\%",
            "BeLevels": levels}


def macro_values(t: ReportTables, params: Mapping) -> dict[str, str]:
    """The macros by name (without the backslash), each a piece of LaTeX."""
    out = {**_testbed_macros(t, params), **_idle_macros(t), **confidence_levels(t, params),
           **_design_macros(t, params), **_original_macros(t, params), **_result_macros(t),
           **_time_macros(t)}
    return {k: str(v) for k, v in out.items()}


def _testbed_macros(t: ReportTables, params: Mapping) -> dict:
    """The study, its testbed, the primary setting and the meter."""
    meter = t.provenance.get("meter", {})
    return {
        "Testbed": tex(params["testbed"]),
        "PrimarySetting": tex(params["primary"]),
        "PrimaryRule": tex(params["primary_rule"]),
        "TestbedDescription": tex(t.provenance.get("description") or params["testbed"]),
        "TestbedDir": params["testbed"],
        "FigDir": params["fig_dir"],
        "StudyName": tex(params["study"]),
        "StudyDescription": tex(params["study_description"] or params["study"]),
        "CpuModel": tex(t.provenance.get("cpu_model")),
        "CpuCount": t.provenance.get("cpu_count"),
        "Kernel": tex(t.provenance.get("kernel")),
        "MeterSource": tex(meter.get("source", "none")),
        "MeterScope": tex(meter.get("scope", "--")),
        "MeterMethod": tex(meter.get("method", "--")),
        "ParetoReads": ", ".join(map(str, PARETO_READS[:-1])) + f" and {PARETO_READS[-1]}",
    }


def _idle_macros(t: ReportTables) -> dict:
    """The idle power, its spread, its windows and its interval."""
    return {
        "IdlePowerW": fixed_tex(t.idle["idle_power_w"], 1),
        "IdleSdW": fixed_tex(t.idle["sd_w"], 2),
        # count: the windows averaged, which a calibration stopping on its interval
        # makes fewer than its maximum (max_count)
        "IdleWindows": f"{t.idle['count']} $\\times$ {t.idle['seconds']:g}\\,s",
        **idle_interval(t.idle),
    }


def _design_macros(t: ReportTables, params: Mapping) -> dict:
    """The inputs, the codecs, the repeat design and the runs it took."""
    runs = t.runs
    measured = [r for r in t.summary if int(r["n"]) > 0]
    repeats = [int(r["n"]) for r in measured]
    return {
        "FileSize": tex(params["file_size"]),
        "FileTypes": tex(", ".join(params["file_types"])),
        "Codecs": tex(", ".join(params["codecs"]) + (
            f" ({params['unmeasured_cells']}: the config's codec_file_types)"
            if params.get("unmeasured_cells") else "")),
        "CodecNotes": tex(codec_notes(params["codecs"])),
        "MinRepeats": params["repeats"]["min"],
        "MaxRepeats": params["repeats"]["max"],
        "CiTargetPct": f"{100 * params['repeats']['ci_target']:g}\\%",
        "RepeatDesign": tex(params["repeat_design"]),
        "DriftCheck": tex(params["drift_check"]),
        "BeIntervals": params["be_intervals"],
        "CiTargetRole": tex(params["ci_target_role"]),
        "RepeatsRange": f"{min(repeats)}--{max(repeats)}" if repeats else "0",
        "CiMet": f"{sum(r['ci_met'] == 'true' for r in measured)} of {len(measured)}",
        "RunsTotal": len(runs),
        "RunsFailed": count_failed(runs),
    }


def codec_notes(codecs) -> str:
    """Which implementation each measured codec is, where the codec registry says more
    than its name (PPMd's variant and parameters, btrfs' ratio on disk)."""
    notes = [f"{name}: {codec.note}" for name in codecs
             if (codec := codec_registry.REGISTRY.get(name)) and codec.note]
    return "; ".join(notes) + "." if notes else ""


def file_size_against_original(size: str, design: Mapping[str, dict]) -> str:
    """The study's file size beside the original's, and what a smaller one means."""
    ours, theirs = parse_size(size), int(design["file_size_bytes"]["value"])
    paper = f"the paper's {design['file_size_bytes']['display']}"
    if ours < theirs:
        return (f"The inputs are {size} rather than {paper}, which was larger than the "
                f"paper's {design['ram_bytes']['display']} of RAM; smaller files fit in "
                "caches that the paper's did not.")
    return f"The inputs are {size}, " + (paper + "." if ours == theirs else f"above {paper}.")


def machine_against_original(emulated: str, design: Mapping[str, dict]) -> str:
    """What the measured tools saw (the config's emulated machine, or the real one)
    beside the original's server."""
    paper = tex(f"the paper's server ran {design['cpus']['display']} and "
                f"{design['ram_bytes']['display']} of RAM")
    if emulated:
        return (f"The measured tools ran on an emulated machine, {tex(emulated)}, inside "
                "the real one of Table~\\ref{tab:provenance}; " + paper + ".")
    return ("The measured tools saw the whole machine of Table~\\ref{tab:provenance}; "
            + paper + ".")


def flush_against_original(flush: str) -> str:
    """How the primary setting's writes reached the device, beside the paper's unmount."""
    if flush == "unmount":
        return ("the target's filesystem has been unmounted, which writes the file out to "
                "the device, as the paper unmounted its partition at the end of each "
                "iteration")
    return ("the written file has been flushed to the device by fsync (the paper unmounted "
            "the partition instead)")


def departures(setup: str | None, found: list[str]) -> str:
    """Each departure from the paper's setup the study made (Study.departures)."""
    if not setup:
        return ""
    if not found:
        return f"The study ran the paper's setup ({setup}) without a departure."
    return (f"Departures from the paper's setup ({setup}): " + "; ".join(found) + ".")


def _original_macros(t: ReportTables, params: Mapping) -> dict:
    """The original's design as the paper states it (paper/reference/systor09_design.csv)."""
    design = t.original_design
    return {
        "PaperFileSize": tex(design["file_size_bytes"]["display"]),
        "PaperTestDisk": tex(design["test_disk"]["display"]),
        "PaperRepeats": tex(f"{design['min_repeats']['display']}, "
                            f"{design['ci_target']['display']}"),
        "PaperIdle": tex(design["idle"]["display"]),
        "FileSizeAgainstPaper": tex(file_size_against_original(params["file_size"], design)),
        "MachineAgainstPaper": machine_against_original(params["emulated_machine"], design),
        "PaperDepartures": tex(departures(params["paper_setup"], params["departures"])),
        "FlushAgainstPaper": tex(flush_against_original(params["primary_flush"])),
    }


def _result_macros(t: ReportTables) -> dict:
    """The numbers of the results the text states: ratios, break-even cells beside the
    originals', claims, inputs, the cross-check, the energy model and plain throughput."""
    overall_r = next((float(c["r"]) for c in t.correlation if c["file_type"] == "all"),
                     float("nan"))
    model_text, model_extremes = model_coefficients(t)
    return {
        "EnergyTimeR": f"{overall_r:.4f}",
        "CrPpmdText": compression_ratio(t, "text", "ppmd"),
        "CrGzSixText": compression_ratio(t, "text", "gz-6"),
        "CrLzoOneText": compression_ratio(t, "text", "lzo-1"),
        "BeGzOneText": breakeven_cell(t, "text", "gz-1"),
        "BeGzSixText": breakeven_cell(t, "text", "gz-6"),
        "BeLzoOneText": breakeven_cell(t, "text", "lzo-1"),
        "BeLzoOneBinary": breakeven_cell(t, "binary", "lzo-1"),
        "PaperCrPpmdText": original(t.table3, "text", "ppmd"),
        "PaperBeGzOneText": original(t.table4, "text", "gz-1", "E"),
        "PaperBeLzoOneText": original(t.table4, "text", "lzo-1", "E"),
        **claim_counts(t),
        **agreement_counts(t),
        "InputSources": tex(input_sources(t.manifest)),
        **crosscheck(t),
        "ModelCoefficients": model_text,
        "ModelExtremes": model_extremes,
        "ModelCheck": model_check(t),
        "PlainReadMiBs": throughput_mib_s(t, "plain-read"),
        "PlainWriteMiBs": throughput_mib_s(t, "plain-write"),
    }


def _time_macros(t: ReportTables) -> dict:
    """The plan's estimate beside the time the measured runs took."""
    measured_s, span_s, first, last = measured_span(t.runs)
    return {
        "EstimateMeasured": minutes(t.estimate["measured_min_s"]),
        "EstimateMeasuredMax": minutes(t.estimate["measured_max_s"]),
        "EstimateWall": minutes(t.estimate["wall_min_s"]),
        "MeasuredTotal": minutes(measured_s),
        "MeasuredSpan": minutes(span_s),
        "MeasuredDates": measured_dates(first, last),
    }


def macros_tex(values: Mapping[str, str], estimated: bool, simulated: bool = False) -> str:
    """The macros file: one \\newcommand each, and the \\ifestimated and \\ifsimulated
    switches (a rehearsal's report says SIMULATED on every page)."""
    lines = ["% Generated by wattzip.report from the analysis tables. Do not edit."]
    lines += [f"\\newcommand{{\\{k}}}{{{v}}}" for k, v in values.items()]
    lines += ["\\newif\\ifestimated", "\\estimatedtrue" if estimated else "\\estimatedfalse"]
    lines += ["\\newif\\ifsimulated", "\\simulatedtrue" if simulated else "\\simulatedfalse"]
    return "\n".join(lines) + "\n"
