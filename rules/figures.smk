"""Figures (R: data.table + ggplot2), from the analysis tables only, in either tree."""


rule figures_per_file_type:
    """Time, energy and ET of every codec on one file type (paper Figures 2, 4, 5, 6)."""
    input:
        summary=RULES.in_root("{testbed}/summary.csv"),
    output:
        **{
            name: report(
                f"{{figs}}/{{testbed}}/{name}_{{ftype}}.pdf",
                caption="../paper/report/per_file_type.rst",
                category="{testbed}",
                subcategory="{ftype}",
            )
            for name in layout.file_type_figures()
        },
    log:
        "{figs}/logs/{testbed}/per_file_type_{ftype}.log",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
        figures=layout.file_type_figures(),
    script:
        "../scripts/figures.R"


rule figures_of_testbed:
    """The figures of every testbed, one per scripts/fig_<name>.R that no rule of its
    own draws (wattzip.model.layout.testbed_figures): E_sav, ratios, energy against
    ratio, energy or time per GB against the ratio with the Pareto front named, ..."""
    input:
        **{name: RULES.in_root(f"{{testbed}}/{name}.csv") for name in ANALYSIS_TABLES},
    output:
        **{
            name: report(
                f"{{figs}}/{{testbed}}/{name}.pdf",
                caption="../paper/report/testbed_figure.rst",
                category="{testbed}",
                subcategory="whole testbed",
            )
            for name in layout.testbed_figures()
        },
    log:
        "{figs}/logs/{testbed}/testbed.log",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
        figures=layout.testbed_figures(),
    script:
        "../scripts/figures.R"


rule figure_levels:
    """Compress-write across the levels of every tool swept over three or more."""
    input:
        summary=RULES.in_root("{testbed}/summary.csv"),
    output:
        report(
            "{figs}/{testbed}/levels.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="whole testbed",
        ),
    log:
        "{figs}/logs/{testbed}/levels.log",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/fig_levels.R"


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


rule figure_threads:
    """Time and energy against the threads of the multi-threaded codecs, with the passive
    energy of the cores left idle (single-threaded codecs measured once, dashed)."""
    input:
        threads=RULES.in_root("{testbed}/threads.csv"),
    output:
        report(
            "{figs}/{testbed}/threads.pdf",
            caption="../paper/report/testbed_figure.rst",
            category="{testbed}",
            subcategory="factors",
        ),
    log:
        "{figs}/logs/{testbed}/threads.log",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/fig_threads.R"


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
