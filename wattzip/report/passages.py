"""The paper's generated passages: the abstract, the per-file-type figures, one section
per varied factor (SYSTOR '11 section 6.3) with its claims, and the list of testbeds."""

from __future__ import annotations

from collections.abc import Mapping

from wattzip import resources
from wattzip.analysis import cell_summary, uncertainty
from wattzip.latex import tex
from wattzip.measure import disturbance
from wattzip.report.tables import ReportTables, rows


def abstract(t: ReportTables, params: Mapping) -> str:
    simulated = params["stage"] == "rehearsal"
    energy_word = ("estimated energy" if t.estimated else
                   "SIMULATED energy (not measured)" if simulated else "measured energy")
    runs_word = "SIMULATED runs" if simulated else "measured runs"
    lines = [
        ("\\textbf{SIMULATED: the rehearsal of this study, from runs synthesised by a "
         "simple model of each codec; nothing was measured.} " if simulated else "")
        + "We reran the evaluation of Kothiyal et al.\\ (SYSTOR '09) on the testbed "
        "\\emph{\\Testbed}: "
        f"{len(params['file_types'])} file types of \\FileSize{{}} each, "
        f"{len(params['codecs'])} compression settings and the plain baseline"
        + (f" ({tex(params['unmeasured_cells'])})" if params.get("unmeasured_cells") else "")
        + ", "
        f"\\RunsTotal{{}} {runs_word} in all (\\RunsFailed{{}} failed or unverified), with "
        f"{energy_word} from the \\MeterSource{{}} meter (scope \\MeterScope).",
        "On text, PPMd's compression ratio is \\CrPpmdText{} (the paper: \\PaperCrPpmdText); "
        "the energy break-even read-to-write ratio of gz-1 is \\BeGzOneText{} (the paper's "
        "server: \\PaperBeGzOneText) and that of lzo-1 is \\BeLzoOneText{} (the paper: "
        "\\PaperBeLzoOneText).",
        "Energy and time correlate with $R = \\EnergyTimeR$ over all runs. Of the original "
        "papers' \\ClaimsTotal{} claims checked, \\ClaimsHold{} hold here, "
        "\\ClaimsRefuted{} are refuted and \\ClaimsUntestable{} cannot be tested on this "
        "testbed.\\ClaimsNotComparable",
    ]
    # disturbance says it in plain text (a column name holds an underscore); the budget in LaTeX
    lines += [tex(disturbance.describe(t.runs)), uncertainty.describe_dominant(t.summary)]
    if two := cell_summary.describe_two_groups(t.summary):
        lines.append(tex(two))
    if t.estimated:
        lines.append(
            "\\textbf{No power meter was available: every energy figure here is ESTIMATED "
            "by a CPU-utilization model, so the energy verdicts say more about the model "
            "than about the machine.}")
    return "\n".join(lines) + "\n"


# The error bars are the repeats' spread alone; each mean's GUM budget is in summary.csv.
BARS = "\\HalfWidthConfidencePct{{}} half-widths of the repeats as error bars"
CAPTIONS = {
    "time": f"Elapsed time, user / system / wait, {BARS} (paper Figure {{n}}a,b).",
    "energy": f"Energy, active / passive, {BARS} (paper Figure {{n}}c,d).",
    "et": f"Energy-delay product, {BARS} (paper Figure {{n}}e,f).",
}
# Estimated energy's largest uncertainty, the coefficient table's range, is in no bar:
# the verdicts take it at the table's extremes instead (wattzip.analysis.robustness).
ESTIMATED_BARS = (" ESTIMATED energy: the bars leave out the coefficient table's range "
                  "(Section~\\ref{sec:estimate}).")
PAPER_FIGURE = {"text": 2, "binary": 4, "random": 5, "zero": 6}


def figure(path: str, caption: str, label: str | None = None) -> list[str]:
    return (["\\begin{figure}[H]\\centering",
             f"\\includegraphics[width=\\linewidth]{{{path}}}", f"\\caption{{{caption}}}"]
            + ([f"\\label{{{label}}}"] if label else []) + ["\\end{figure}"])


def figure_list(file_types: list[str], estimated: bool) -> str:
    """Time, energy and ET figures of each file type, beside the paper's figure numbers."""
    out = []
    for ftype in file_types:
        n = PAPER_FIGURE.get(ftype, "--")
        out.append(f"\\subsection{{{tex(ftype.capitalize())} file}}")
        for kind, caption in CAPTIONS.items():
            mark = ESTIMATED_BARS if estimated and kind != "time" else ""
            out += figure(f"\\FigDir/{kind}_{ftype}.pdf",
                          f"{tex(ftype.capitalize())} file: {caption.format(n=n)}{mark}",
                          f"fig:{kind}-{ftype}")
    return "\n".join(out) + "\n"


FACTOR_TITLES = {f["name"]: f["title"] for f in resources.factor_table()}
EMULATED_DISKS = {
    # The input on the medium: SYSTOR '09's layout (wattzip.machine.onedisk).
    "on-medium": (
        "These disks were \\emph{emulated}, in SYSTOR '09's layout of one disk read and "
        "written: each job staged its input on the medium (outside the measured region), "
        "and every read and write of the medium's image went through one budget at the "
        "disk's rate (a FUSE file under the loop device), so reading the input and writing "
        "the output shared one bandwidth, as on the paper's dedicated disk. Time is "
        "measured for real at that speed; the power drawn is this machine's, not that of "
        "such a disk, and includes the emulator's own CPU time. Only the bandwidth is "
        "emulated: no seek times, no rotational delay."),
    "separate": (
        "These disks were \\emph{emulated}: the measured commands ran in a block-I/O cgroup "
        "whose throttle capped the target's and the input's devices at each rate, so time "
        "is measured for real at that speed, while the power drawn is this machine's, not "
        "that of such a disk. Each device had its own read budget and its own write budget "
        "(the kernel's limits keep them apart), and the input was read from its own disk: "
        "unlike SYSTOR '09's one disk, where reading the input and writing the output share "
        "one bandwidth, a plain write here does not wait for its input's reads, so it is "
        "faster than on that disk and compression's saving on the write side is "
        "understated."),
}
THREADS = (
    "The thread count is a factor of the multi-threaded codecs alone (pigz \\texttt{-p}, "
    "zstd and xz \\texttt{-T}, pbzip2 \\texttt{-p}, lbzip2 \\texttt{-n}); brotli's command "
    "line has no threads, and every single-threaded codec runs the same at any count, so "
    "it was measured once, at the first. Multi-threaded and single-threaded codecs are "
    "compared on what the whole machine spends on the same input, its time and its "
    "energy, not on speed per thread: a codec that keeps one core busy leaves the others "
    "idle, and the machine draws their idle power all the same for as long as it runs. "
    "That passive energy of the idle cores is each run's passive energy (the idle "
    "calibration's power over its meter interval) times the share of the cores it left "
    "idle, (cores $-$ threads) / cores: the idle power split evenly over the cores, an "
    "attribution, not a reading of each core.")
HPC14 = [
    "\\section{Compression in the filesystem and between compute phases (HPC '14)}",
    "Filesystem-level compression (btrfs \\texttt{compress-force}) is measured as a plain "
    "write onto the compressing mount and a plain read from it, against the same "
    "filesystem without compression; its ratio is what the files take on disk. The "
    "duty-cycle runs write the input, flush it and compute, several times, each run the "
    "whole workload.",
    "\\input{generated/\\TestbedDir/hpc14}",
]


def factor_sections(claims: list[dict], params: Mapping, estimated: bool) -> str:
    """A section per factor the study varies, its figures and its claims; none without."""
    mark = ESTIMATED_BARS if estimated else ""
    out = []
    if params["varied_factors"]:
        out.append("\\section{Factors of the follow-up study (SYSTOR '11)}")
    for factor in params["varied_factors"]:
        values = params["factor_values"][factor]
        out += [f"\\subsection{{{FACTOR_TITLES[factor]}}}",
                f"The study ran "
                f"{'its multi-threaded codecs' if factor == 'threads' else 'every codec'} "
                f"under {len(values)} values of this factor: "
                f"{tex(', '.join(values))}."]
        out += figure(f"\\FigDir/factor_{factor}.pdf",
                      f"{FACTOR_TITLES[factor]}: energy of each codec under each value, "
                      f"{BARS.format()}.{mark}")
        if factor == "threads":
            out += [THREADS]
            out += figure("\\FigDir/threads.pdf",
                          f"{FACTOR_TITLES[factor]}: time, energy and the idle cores' passive "
                          f"energy of each codec's operations against the thread count, "
                          f"{BARS.format()}; dashed, a single-threaded codec, measured "
                          f"once.{mark}")
        if factor == "bandwidth":
            out += [EMULATED_DISKS[layout] for layout in params["emulated_input_layouts"]]
            out += figure("\\FigDir/bandwidth.pdf",
                          f"{FACTOR_TITLES[factor]}: break-even read-to-write ratio of each "
                          f"codec in time (T) and energy (E) against the emulated disk's "
                          f"bandwidth, as the SYSTOR '09 slides print it; grey cells are "
                          f"undecided at \\BeJointConfidencePct{{}}. A framed cell is where "
                          f"compression starts to pay: the fastest disk from which on, down "
                          f"to the slowest, the cell is decided $\\forall$ (it saves on the "
                          f"write and on every read).{mark}")
        out += [f"\\paragraph{{Claim ({tex(c['source'])}).}} {tex(c['claim'])}: "
                f"\\textbf{{{tex(c['verdict'])}}}{tex(claim_mark(c))}. {tex(c['evidence'])}"
                for c in claims if c.get("factor") == factor]
    if params["hpc14"]:
        out += HPC14
    return "\n".join(out) + "\n"


def claim_mark(claim: Mapping) -> str:
    """What the claims table marks beside a verdict: resting on ESTIMATED energy, and
    whether it is robust to the model."""
    if str(claim.get("estimated", "")).lower() != "true":
        return ""
    robust = claim.get("model_robustness") or ""
    return " (on ESTIMATED energy" + (f"; {robust})" if robust else ")")


def testbed_list(testbeds: list[str], summaries: list[str], descriptions: Mapping,
                 simulated: bool = False) -> str:
    """Every testbed of the report: what it is, its meter, whether its energy is estimated
    (and, in the rehearsal, that it is SIMULATED)."""
    out = ["\\begin{center}\\small", "\\begin{tabular}{llllr}", "\\toprule",
           "Testbed & Description & Meter (scope) & Energy & Runs \\\\", "\\midrule"]
    for name, path in zip(testbeds, summaries, strict=True):
        measured = [r for r in rows(path) if int(r["n"] or 0) > 0]
        methods = {r["meter_method"] for r in measured if r["meter_method"]}
        meter = sorted({f"{r['meter_source']} ({r['meter_scope']})" for r in measured
                        if r["meter_source"]})
        energy = ("ESTIMATED" if "estimated" in methods else
                  "measured" if "measured" in methods else "none")
        if simulated and energy != "none":
            energy = "SIMULATED" + (", ESTIMATED" if energy == "ESTIMATED" else "")
        description = descriptions.get(name) or "results brought in (runs.csv)"
        out.append(f"{tex(name)} & {tex(description)} & {tex(', '.join(meter) or '--')} & "
                   f"{energy} & {sum(int(r['n']) for r in measured)} \\\\")
    out += ["\\bottomrule", "\\end{tabular}", "\\end{center}"]
    return "\n".join(out) + "\n"


def testbeds_figure(path: str | None, estimated: bool) -> str:
    """With several testbeds, their energy side by side (none with one)."""
    if not path:
        return ""
    mark = " A testbed marked ESTIMATED has no power meter." if estimated else ""
    return "\n".join(figure(path, "Every testbed's compress-write and decompress-read "
                             "energy relative to plain I/O, primary setting." + mark,
                             "fig:testbeds")) + "\n"
