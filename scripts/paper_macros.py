"""Numbers and generated passages of the paper: macros, abstract, figure list.

Every number in the paper's text comes from here, computed from the analysis
tables; nothing is typed by hand.  When the energy is estimated the macros
turn on the first page's banner and the abstract says so.
"""

import csv
import json
import sys
from pathlib import Path

from wattzip.latex import tex
from wattzip.meters.coefficients import extremes
from wattzip.reference import read_reference
from wattzip.robustness import median_abs_error_pct

sys.stderr = open(snakemake.log[0], "w")
inp = snakemake.input
par = snakemake.params


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def display(d):
    if not d:
        return "--"
    undecided = d.endswith("?")
    d = d.rstrip("?")
    d = rf"$\sim\!10^{{{d[4:]}}}$" if d.startswith("~10^") else tex(d)
    return d + (r"\textsuperscript{?}" if undecided else "")


def primary(path):
    """The primary setting's rows of an analysis table (the study model flagged them)."""
    return [r for r in rows(path) if r["primary"] == "true"]


summary = primary(inp.summary)
breakeven = primary(inp.breakeven)
correlation = primary(inp.correlation)
claims = [r for r in rows(inp.claims) if r["setting"] == "all" or r["primary"] == "true"]
prov = json.loads(Path(inp.provenance).read_text())
idle = json.loads(Path(inp.idle).read_text())
if idle["setting"] != par.primary or {r["setting"] for r in summary} != {par.primary}:
    raise SystemExit(f"the idle calibration ({idle['setting']}) and the tables "
                     f"({sorted({r['setting'] for r in summary})}) are not all of the primary "
                     f"setting {par.primary}")
manifest = json.loads(Path(inp.manifest).read_text())
runs = rows(inp.runs)
crosscheck = rows(inp.crosscheck) if inp.get("crosscheck") else []
estimate = json.loads(Path(inp.estimate).read_text())
table3 = read_reference(inp.table3)[1]
table4 = read_reference(inp.table4)[1]


def original(table, file_type, codec, metric=None):
    """A cell of an original paper's table, as the paper printed it."""
    for r in table:
        if (r["file_type"], r["codec"]) == (file_type, codec) and metric in (None, r.get("metric")):
            return display(r["display"])
    return "--"


estimated = any(r["meter_method"] == "estimated" for r in summary)
n_runs = len(runs)
n_failed = sum(r["verified"] != "true" for r in runs)
n_ops = [r for r in summary if int(r["n"]) > 0]
ci_met = sum(r["ci_met"] == "true" for r in n_ops)
repeats = [int(r["n"]) for r in n_ops]
overall_r = next((float(c["r"]) for c in correlation if c["file_type"] == "all"), float("nan"))
verdicts = [c["verdict"] for c in claims]
holds = sum(v == "holds" for v in verdicts)
refuted = sum(v == "refuted" for v in verdicts)
untestable = sum(v.startswith("not testable") for v in verdicts)


def be(file_type, codec, metric="E"):
    for b in breakeven:
        if (b["file_type"], b["codec"], b["metric"]) == (file_type, codec, metric):
            return display(b["display"])
    return "--"


def cr(file_type, codec):
    for s in summary:
        if (s["file_type"], s["codec"], s["op"]) == (file_type, codec, "compress-write"):
            return f"{float(s['compression_ratio']):.2f}"
    return "--"


def throughput_mib_s(op):
    """Mean plain-I/O rate over the file types: what the target disk did here."""
    rates = [int(s["input_bytes"]) / float(s["mean_elapsed_s"]) / 2**20 for s in summary
             if s["op"] == op and s["codec"] == "plain" and float(s["mean_elapsed_s"]) > 0]
    return f"{sum(rates) / len(rates):.0f}" if rates else "--"


text_sources = []
for entry in manifest["inputs"]:
    for src in entry.get("sources", []):
        if "package" in src:
            package = f"{src['package']} {src.get('version')}"
            text_sources.append(f"{entry['file_type']}: Debian {package}")
        elif "source" in src and "files" in src:
            text_sources.append(f"{entry['file_type']}: {src['source']} ({src['files']} files)")
        elif "source" in src:
            text_sources.append(f"{entry['file_type']}: {src['source']}")
meter = prov.get("meter", {})
ratios = [float(c["ratio_hyperfine_to_harness"]) for c in crosscheck
          if c["ratio_hyperfine_to_harness"] not in ("", "nan")]
unconditioned = sorted({c["not_compared"] for c in crosscheck if c.get("not_compared")})
model_runs = [r for r in runs if r.get("model_row")]
if model_runs:
    r0 = model_runs[0]
    model_text = (f"{r0['model_row']} ({r0['model_how']}), "
                  f"{float(r0['model_min_w_per_thread']):.2f}--"
                  f"{float(r0['model_max_w_per_thread']):.2f} W per thread $\\times$ "
                  f"{r0['model_threads']} threads, from {tex(r0['model_source'])}")
else:
    model_text = "not recorded with these runs"
low, high = extremes(int(float(model_runs[0]["model_threads"])) if model_runs else 1)
checked = [r for r in rows(inp.model_check) if r.get("setting") not in (None, "", "all")]
model_check = (f"Beside the {tex(checked[0]['meter_source'])} meter, the model's estimate "
               f"of the same {len(checked)} runs was off by "
               f"{median_abs_error_pct(checked):.0f}\\% (median of the absolute errors; "
               "every run in model\\_check.csv)." if checked else "")

def minutes(seconds):
    return f"{seconds / 60:.1f}\\,min"


def stamp(text):
    import datetime as dt

    return dt.datetime.fromisoformat(text).timestamp()


timed = [r for r in runs if r["started_at"]]
measured_s = sum(float(r["elapsed_s"]) for r in timed)
span_s = (max(stamp(r["ended_at"]) for r in timed) - min(stamp(r["started_at"]) for r in timed)
          if timed else 0.0)

macros = {
    "Testbed": tex(par.testbed),
    "PrimarySetting": tex(par.primary),
    "PrimaryRule": tex(par.primary_rule),
    "TestbedDescription": tex(prov.get("description") or par.testbed),
    "TestbedDir": par.testbed,
    "FigDir": f"../figures/{par.testbed}",
    "CpuModel": tex(prov.get("cpu_model")),
    "CpuCount": prov.get("cpu_count"),
    "Kernel": tex(prov.get("kernel")),
    "MeterSource": tex(meter.get("source", "none")),
    "MeterScope": tex(meter.get("scope", "--")),
    "MeterMethod": tex(meter.get("method", "--")),
    "IdlePowerW": f"{idle['idle_power_w']:.1f}",
    "IdleSdW": f"{idle['sd_w']:.2f}",
    "IdleWindows": f"{idle['count']} $\\times$ {idle['seconds']:g}\\,s",
    "FileSize": tex(par.file_size),
    "FileTypes": tex(", ".join(par.file_types)),
    "Codecs": tex(", ".join(par.codecs)),
    "MinRepeats": par.repeats["min"],
    "MaxRepeats": par.repeats["max"],
    "CiTargetPct": f"{100 * par.repeats['ci_target']:g}\\%",
    "RepeatsRange": f"{min(repeats)}--{max(repeats)}" if repeats else "0",
    "CiMet": f"{ci_met} of {len(n_ops)}",
    "RunsTotal": n_runs,
    "RunsFailed": n_failed,
    "EnergyTimeR": f"{overall_r:.4f}",
    "CrPpmdText": cr("text", "ppmd"),
    "CrGzSixText": cr("text", "gz-6"),
    "CrLzoOneText": cr("text", "lzo-1"),
    "BeGzOneText": be("text", "gz-1"),
    "BeGzSixText": be("text", "gz-6"),
    "BeLzoOneText": be("text", "lzo-1"),
    "BeLzoOneBinary": be("binary", "lzo-1"),
    "PaperCrPpmdText": original(table3, "text", "ppmd"),
    "PaperBeGzOneText": original(table4, "text", "gz-1", "E"),
    "PaperBeLzoOneText": original(table4, "text", "lzo-1", "E"),
    "ClaimsTotal": len(claims),
    "ClaimsHold": holds,
    "ClaimsRefuted": refuted,
    "ClaimsUntestable": untestable,
    "InputSources": tex("; ".join(text_sources)),
    "CrosscheckRange": (f"{min(ratios):.2f}--{max(ratios):.2f}" if ratios else "--"),
    "CrosscheckCount": len(ratios),
    "ModelCoefficients": model_text,
    "ModelExtremes": tex(f"{low.row}, {low.min_w_per_thread:.2f}-{low.max_w_per_thread:.2f} W; "
                         f"{high.row}, {high.min_w_per_thread:.2f}-{high.max_w_per_thread:.2f} W"),
    "ModelCheck": model_check,
    "CrosscheckNote": tex("; ".join(unconditioned) + " (hyperfine runs on a plain directory "
                          "with the machine as it is), so no command was compared"
                          if unconditioned else ""),
    "PlainReadMiBs": throughput_mib_s("plain-read"),
    "EstimateMeasured": minutes(estimate["measured_min_s"]),
    "EstimateMeasuredMax": minutes(estimate["measured_max_s"]),
    "EstimateWall": minutes(estimate["wall_min_s"]),
    "MeasuredTotal": minutes(measured_s),
    "MeasuredSpan": minutes(span_s),
    "PlainWriteMiBs": throughput_mib_s("plain-write"),
}
out = Path(snakemake.output.macros)
out.parent.mkdir(parents=True, exist_ok=True)
lines = ["% Generated by scripts/paper_macros.py from the analysis tables. Do not edit."]
lines += [f"\\newcommand{{\\{k}}}{{{v}}}" for k, v in macros.items()]
lines.append("\\newif\\ifestimated")
lines.append("\\estimatedtrue" if estimated else "\\estimatedfalse")
out.write_text("\n".join(lines) + "\n")

energy_word = "estimated energy" if estimated else "measured energy"
abstract = [
    "We reran the evaluation of Kothiyal et al.\\ (SYSTOR '09) on the testbed "
    f"\\emph{{\\Testbed}}: "
    f"{len(par.file_types)} file types of \\FileSize{{}} each, {len(par.codecs)} compression "
    f"settings and the plain baseline, {n_runs} measured runs in all ({n_failed} failed or "
    f"unverified), with {energy_word} from the \\MeterSource{{}} meter (scope \\MeterScope).",
    "On text, PPMd's compression ratio is \\CrPpmdText{} (the paper: \\PaperCrPpmdText); the "
    "energy break-even read-to-write ratio of gz-1 is \\BeGzOneText{} (the paper's server: "
    "\\PaperBeGzOneText) and that of lzo-1 is \\BeLzoOneText{} (the paper: \\PaperBeLzoOneText).",
    "Energy and time correlate with $R = \\EnergyTimeR$ over all runs. Of the original papers' "
    "\\ClaimsTotal{} claims checked, \\ClaimsHold{} hold here, "
    "\\ClaimsRefuted{} are refuted and \\ClaimsUntestable{} cannot be tested on this testbed.",
]
if estimated:
    abstract.append(
        "\\textbf{No power meter was available: every energy figure here is ESTIMATED by a "
        "CPU-utilization model, so the energy verdicts say more about the model than about the "
        "machine.}"
    )
Path(snakemake.output.abstract).write_text("\n".join(abstract) + "\n")

figure_tex = []
captions = {
    "time": "Elapsed time, user / system / wait, 95\\% half-widths as error bars "
    "(paper Figure {n}a,b).",
    "energy": "Energy, active / passive (paper Figure {n}c,d).",
    "et": "Energy-delay product (paper Figure {n}e,f).",
}
paper_figure = {"text": 2, "binary": 4, "random": 5, "zero": 6}
for ftype in par.file_types:
    n = paper_figure.get(ftype, "--")
    figure_tex.append(f"\\subsection{{{tex(ftype.capitalize())} file}}")
    for kind, caption in captions.items():
        mark = " ESTIMATED energy." if estimated and kind != "time" else ""
        figure_tex += [
            "\\begin{figure}[H]\\centering",
            f"\\includegraphics[width=\\linewidth]{{\\FigDir/{kind}_{ftype}.pdf}}",
            f"\\caption{{{tex(ftype.capitalize())} file: {caption.format(n=n)}{mark}}}",
            f"\\label{{fig:{kind}-{ftype}}}",
            "\\end{figure}",
        ]
Path(snakemake.output.figures).write_text("\n".join(figure_tex) + "\n")

# One section per factor the study varies (SYSTOR '11 section 6.3); none without factors.
factor_titles = {"medium": "Storage media", "io_scheduler": "I/O schedulers",
                 "governor": "CPU frequency governors", "copies": "Concurrency",
                 "bandwidth": "Disk bandwidth"}
factor_tex = []
if par.varied_factors:
    factor_tex.append("\\section{Factors of the follow-up study (SYSTOR '11)}")
for factor in par.varied_factors:
    values = par.factor_values[factor]
    factor_tex += [f"\\subsection{{{factor_titles[factor]}}}",
                   f"The study ran every codec under {len(values)} values of this factor: "
                   f"{tex(', '.join(values))}."]
    if factor == "bandwidth":
        factor_tex.append(
            "These disks were \\emph{emulated}: the measured commands ran in a block-I/O "
            "cgroup whose throttle capped the target's and the input's devices at each "
            "rate, so time is measured for real at that speed, while the power drawn is "
            "this machine's, not that of such a disk.")
    figs = [f"factor_{factor}"] + (["bandwidth"] if factor == "bandwidth" else [])
    for fig in figs:
        factor_tex += ["\\begin{figure}[H]\\centering",
                       f"\\includegraphics[width=\\linewidth]{{\\FigDir/{fig}.pdf}}",
                       f"\\caption{{{factor_titles[factor]}: "
                       + ("break-even read-to-write ratio against the emulated disk's "
                          "bandwidth; hollow points are undecided at 95\\%."
                          if fig == "bandwidth" else "energy of each codec under each value, "
                          "95\\% half-widths.")
                       + (" ESTIMATED energy." if estimated else "") + "}",
                       "\\end{figure}"]
    for c in claims:
        if c.get("factor") == factor:
            factor_tex.append(f"\\paragraph{{Claim ({tex(c['source'])}).}} {tex(c['claim'])}: "
                              f"\\textbf{{{tex(c['verdict'])}}}. {tex(c['evidence'])}")
if par.hpc14:
    factor_tex += [
        "\\section{Compression in the filesystem and between compute phases (HPC '14)}",
        "Filesystem-level compression (btrfs \\texttt{compress-force}) is measured as a "
        "plain write onto the compressing mount and a plain read from it, against the same "
        "filesystem without compression; its ratio is what the files take on disk. The "
        "duty-cycle runs write the input, flush it and compute, several times, each run the "
        "whole workload.",
        "\\input{generated/\\TestbedDir/hpc14}",
    ]
Path(snakemake.output.factors).write_text("\n".join(factor_tex) + "\n")
print(json.dumps(macros, indent=1, default=str), file=sys.stderr)

# Every testbed of the report: what it is, its meter, and whether its energy is estimated.
listing = ["\\begin{tabular}{llllr}", "\\toprule",
           "Testbed & Description & Meter (scope) & Energy & Runs \\\\", "\\midrule"]
for name, path in zip(par.testbeds, inp.summaries, strict=True):
    rows_of = [r for r in rows(path) if int(r["n"] or 0) > 0]
    methods = {r["meter_method"] for r in rows_of if r["meter_method"]}
    meter = sorted({f"{r['meter_source']} ({r['meter_scope']})" for r in rows_of
                    if r["meter_source"]})
    energy = ("ESTIMATED" if "estimated" in methods else
              "measured" if "measured" in methods else "none")
    description = par.descriptions.get(name) or "results brought in (runs.csv)"
    listing.append(f"{tex(name)} & {tex(description)} & {tex(', '.join(meter) or '--')} & "
                   f"{energy} & {sum(int(r['n']) for r in rows_of)} \\\\")
listing += ["\\bottomrule", "\\end{tabular}"]
Path(snakemake.output.testbed_list).write_text("\n".join(listing) + "\n")
