"""Figures (R: data.table + ggplot2) and LaTeX tables, from the analysis tables only."""


rule figure_per_file_type:
    """Time, energy or ET of every codec on one file type (paper Figures 2, 4, 5, 6)."""
    input:
        summary=f"{RESULTS}/{{testbed}}/summary.csv",
    output:
        report(
            "figures/{testbed}/{kind}_{ftype}.pdf",
            caption="../paper/report/per_file_type.rst",
            category="{testbed}",
            subcategory="{ftype}",
        ),
    log:
        f"{RESULTS}/{{testbed}}/logs/figures/{{kind}}_{{ftype}}.log",
    wildcard_constraints:
        kind="time|energy|et",
    conda:
        "../envs/r.yaml"
    script:
        "../scripts/fig_{wildcards.kind}.R"


rule figure_of_testbed:
    """One figure of the whole testbed: E_sav, ratios, energy against ratio, levels."""
    input:
        summary=f"{RESULTS}/{{testbed}}/summary.csv",
        esav=f"{RESULTS}/{{testbed}}/esav.csv",
        breakeven=f"{RESULTS}/{{testbed}}/breakeven.csv",
    output:
        report(
            "figures/{testbed}/{kind}.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="whole testbed",
        ),
    log:
        f"{RESULTS}/{{testbed}}/logs/figures/{{kind}}.log",
    wildcard_constraints:
        kind="esav|ratio|tradeoff|levels",
    conda:
        "../envs/r.yaml"
    script:
        "../scripts/fig_{wildcards.kind}.R"


rule figure_pareto:
    """Energy or time per GB (a write and n reads) against the ratio, the Pareto front named."""
    input:
        pareto=f"{RESULTS}/{{testbed}}/pareto.csv",
    output:
        report(
            "figures/{testbed}/pareto_{metric}.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="whole testbed",
        ),
    log:
        f"{RESULTS}/{{testbed}}/logs/figures/pareto_{{metric}}.log",
    wildcard_constraints:
        metric="energy|time",
    conda:
        "../envs/r.yaml"
    script:
        "../scripts/fig_pareto.R"


rule figure_factor:
    """Energy under each value of one factor (SYSTOR '11 Figures 8-10)."""
    input:
        summary=f"{RESULTS}/{{testbed}}/summary.csv",
    output:
        report(
            "figures/{testbed}/factor_{factor}.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="factors",
        ),
    log:
        f"{RESULTS}/{{testbed}}/logs/figures/factor_{{factor}}.log",
    wildcard_constraints:
        factor="|".join(FACTORS),
    conda:
        "../envs/r.yaml"
    script:
        "../scripts/fig_factor.R"


rule figure_bandwidth:
    """Break-even against the emulated disk's bandwidth (laptop, desktop, server disks)."""
    input:
        summary=f"{RESULTS}/{{testbed}}/summary.csv",
        breakeven=f"{RESULTS}/{{testbed}}/breakeven.csv",
    output:
        report(
            "figures/{testbed}/bandwidth.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="factors",
        ),
    log:
        f"{RESULTS}/{{testbed}}/logs/figures/bandwidth.log",
    conda:
        "../envs/r.yaml"
    script:
        "../scripts/fig_bandwidth.R"


rule figure_timeline:
    """Power and block I/O during chosen runs (SYSTOR '11 Figures 4-7), from the traces."""
    input:
        runs=f"{RESULTS}/{{testbed}}/runs.csv",
    output:
        report(
            "figures/{testbed}/timeline.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="whole testbed",
        ),
    log:
        f"{RESULTS}/{{testbed}}/logs/figures/timeline.log",
    wildcard_constraints:
        testbed=this_testbed(),
    conda:
        "../envs/r.yaml"
    params:
        file_type=TIMELINE["file_type"],
        codecs=TIMELINE["codecs"],
    script:
        "../scripts/fig_timeline.R"


rule figure_testbeds:
    """Every testbed side by side (only when results of other machines are present)."""
    input:
        summaries=expand(f"{RESULTS}/{{testbed}}/summary.csv", testbed=all_testbeds()),
    output:
        report(
            "figures/testbeds.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="testbeds",
        ),
    log:
        f"{RESULTS}/logs/figures/testbeds.log",
    conda:
        "../envs/r.yaml"
    script:
        "../scripts/fig_testbeds.R"


rule table_of_testbed:
    """A LaTeX table of one testbed: ratios, claims or provenance."""
    input:
        unpack(table_inputs),
    output:
        "paper/generated/{testbed}/{table}.tex",
    log:
        f"{RESULTS}/{{testbed}}/logs/tables/{{table}}.log",
    wildcard_constraints:
        table="ratios|claims|provenance",
    conda:
        "../envs/r.yaml"
    script:
        "../scripts/table_{wildcards.table}.R"


rule reference_tex:
    """An original table with its cells in LaTeX, set by the reproduced values' formatter."""
    input:
        "paper/reference/{name}.csv",
    output:
        "paper/generated/reference/{name}.csv",
    log:
        f"{RESULTS}/logs/reference/{{name}}.log",
    conda:
        "../envs/wattzip.yaml"
    script:
        "../scripts/reference_tex.py"


rule table_hpc14:
    """Filesystem compression and write/compute duty cycles beside HPC '14 Tables I-IV."""
    input:
        summary=f"{RESULTS}/{{testbed}}/summary.csv",
        table2="paper/reference/hpc14_table2_patterns.csv",
        table3="paper/reference/hpc14_table3_write_only.csv",
        table4="paper/reference/hpc14_table4_write_compute.csv",
    output:
        "paper/generated/{testbed}/hpc14.tex",
    log:
        f"{RESULTS}/{{testbed}}/logs/tables/hpc14.log",
    conda:
        "../envs/r.yaml"
    params:
        duty_codecs=DUTY_CODECS,
    script:
        "../scripts/table_hpc14.R"


rule table_breakeven:
    """Break-even ratios beside one original table (Tables 4/5, the talk's slides)."""
    input:
        breakeven=f"{RESULTS}/{{testbed}}/breakeven.csv",
        summary=f"{RESULTS}/{{testbed}}/summary.csv",
        reference=breakeven_reference,
    output:
        "paper/generated/{testbed}/breakeven_{original}.tex",
    log:
        f"{RESULTS}/{{testbed}}/logs/tables/breakeven_{{original}}.log",
    conda:
        "../envs/r.yaml"
    params:
        metrics=breakeven_metrics,
        original=breakeven_title,
    script:
        "../scripts/table_breakeven.R"


rule table_testbeds:
    """Text break-even of every testbed beside the talk's server, desktop and laptop."""
    input:
        breakeven=expand(f"{RESULTS}/{{testbed}}/breakeven.csv", testbed=all_testbeds()),
        slides=expand(
            "paper/generated/reference/systor09_slides_breakeven_{machine}.csv",
            machine=["server", "desktop", "laptop"],
        ),
    output:
        "paper/generated/testbeds.tex",
    log:
        f"{RESULTS}/logs/tables/testbeds.log",
    conda:
        "../envs/r.yaml"
    script:
        "../scripts/table_testbeds.R"
