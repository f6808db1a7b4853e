"""Analysis: every number of the papers from the run records, per testbed."""


rule settings_table:
    """The study's settings: one row each, a column per factor, the primary one flagged."""
    output:
        f"{RESULTS}/{{testbed}}/settings.csv",
    log:
        f"{RESULTS}/{{testbed}}/logs/settings_table.log",
    wildcard_constraints:
        testbed=this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    params:
        rows=settings_rows,
    script:
        "../scripts/settings_table.py"


rule analyze:
    """Summary, break-even, E_sav, correlation, claims and comparison tables of one testbed."""
    input:
        runs=f"{RESULTS}/{{testbed}}/runs.csv",
        settings=analysis_settings,
        reference=REFERENCE_FILES,
    output:
        **{name: f"{RESULTS}/{{testbed}}/{name}.csv" for name in ANALYSIS_TABLES},
    log:
        f"{RESULTS}/{{testbed}}/logs/analyze.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        out=output_dir,
        settings=settings_flag,
        ci_target=REPEATS["ci_target"],
        margin=STUDY.config["verdict"]["margin"],
        reads=STUDY.config["verdict"]["reads_per_write"],
        looks=len(STUDY.looks) if STUDY.verdict_design else 0,
        moderated="--moderated" if STUDY.moderated_design else "",
    shell:
        "wattzip analyze {input.runs} {params.settings} --out {params.out} "
        "--reference paper/reference --ci-target {params.ci_target} "
        "--margin {params.margin} --reads-per-write {params.reads} --looks {params.looks} "
        "{params.moderated} 2> {log}"
