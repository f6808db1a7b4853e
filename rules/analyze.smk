"""Analysis: every number of the papers from the run records, per testbed and tree."""


rule settings_table:
    """The study's settings: one row each, a column per factor, the primary one flagged."""
    output:
        "{root}/{testbed}/settings.csv",
    log:
        "{root}/{testbed}/logs/settings_table.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    params:
        code=REPORT_CODE,
        rows=RULES.settings_rows,
    script:
        "../scripts/settings_table.py"


rule analyze:
    """Summary, break-even, E_sav, correlation, claims, comparison, Pareto, model-check,
    codec and I/O split and lzbench-shaped tables of one testbed (lzbench's also as
    Markdown)."""
    input:
        runs="{root}/{testbed}/runs.csv",
        settings=RULES.analysis_settings,
        reference=REFERENCE_FILES,
        claims="paper/reference/claims.yaml",
    output:
        **{name: f"{{root}}/{{testbed}}/{name}.csv" for name in ANALYSIS_TABLES},
        lzbench_md="{root}/{testbed}/lzbench.md",
    log:
        "{root}/{testbed}/logs/analyze.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        code=REPORT_CODE,
        settings=RULES.settings_flag,
        stage=RULES.stage_flag,
        options=ANALYSIS_OPTIONS.flags(),
    shell:
        "wattzip analyze {input.runs:q} {params.settings} --out {wildcards.root:q}/{wildcards.testbed:q} "
        "--expect {params.stage} --testbed {wildcards.testbed:q} --reference paper/reference "
        "{params.options} 2> {log:q}"
