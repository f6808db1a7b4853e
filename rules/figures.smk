"""Figures (R: data.table + ggplot2), from the analysis tables only, in either tree."""


rule figure_per_file_type:
    """Time, energy or ET of every codec on one file type (paper Figures 2, 4, 5, 6)."""
    input:
        summary=RULES.in_root("{testbed}/summary.csv"),
    output:
        report(
            "{figs}/{testbed}/{kind}_{ftype}.pdf",
            caption="../paper/report/per_file_type.rst",
            category="{testbed}",
            subcategory="{ftype}",
        ),
    log:
        "{figs}/logs/{testbed}/{kind}_{ftype}.log",
    wildcard_constraints:
        kind="time|energy|et",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/fig_{wildcards.kind}.R"


rule figure_of_testbed:
    """One figure of the whole testbed: E_sav, ratios, energy against ratio, levels."""
    input:
        summary=RULES.in_root("{testbed}/summary.csv"),
        esav=RULES.in_root("{testbed}/esav.csv"),
        breakeven=RULES.in_root("{testbed}/breakeven.csv"),
    output:
        report(
            "{figs}/{testbed}/{kind}.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="whole testbed",
        ),
    log:
        "{figs}/logs/{testbed}/{kind}.log",
    wildcard_constraints:
        kind="esav|ratio|tradeoff|levels",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/fig_{wildcards.kind}.R"


rule figure_pareto:
    """Energy or time per GB (a write and n reads) against the ratio, the Pareto front named."""
    input:
        pareto=RULES.in_root("{testbed}/pareto.csv"),
    output:
        report(
            "{figs}/{testbed}/pareto_{metric}.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="whole testbed",
        ),
    log:
        "{figs}/logs/{testbed}/pareto_{metric}.log",
    wildcard_constraints:
        metric="energy|time",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/fig_pareto.R"


rule figure_factor:
    """Energy under each value of one factor (SYSTOR '11 Figures 8-10)."""
    input:
        summary=RULES.in_root("{testbed}/summary.csv"),
    output:
        report(
            "{figs}/{testbed}/factor_{factor}.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="factors",
        ),
    log:
        "{figs}/logs/{testbed}/factor_{factor}.log",
    wildcard_constraints:
        factor="|".join(FACTORS),
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/fig_factor.R"


rule figure_bandwidth:
    """Break-even against the emulated disk's bandwidth (laptop, desktop, server disks)."""
    input:
        summary=RULES.in_root("{testbed}/summary.csv"),
        breakeven=RULES.in_root("{testbed}/breakeven.csv"),
    output:
        report(
            "{figs}/{testbed}/bandwidth.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="factors",
        ),
    log:
        "{figs}/logs/{testbed}/bandwidth.log",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/fig_bandwidth.R"


rule figure_timeline:
    """Power and block I/O during chosen runs (SYSTOR '11 Figures 4-7), from the traces."""
    input:
        runs=RULES.in_root("{testbed}/runs.csv"),
    output:
        report(
            "{figs}/{testbed}/timeline.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="whole testbed",
        ),
    log:
        "{figs}/logs/{testbed}/timeline.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
        file_type=layout.timeline(STUDY)["file_type"],
        codecs=layout.timeline(STUDY)["codecs"],
    script:
        "../scripts/fig_timeline.R"


rule figure_testbeds:
    """Every testbed side by side (only when results of other machines are present)."""
    input:
        summaries=RULES.testbed_tables("summary.csv"),
    output:
        report(
            "{figs}/testbeds.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="testbeds",
        ),
    log:
        "{figs}/logs/testbeds.log",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/fig_testbeds.R"
