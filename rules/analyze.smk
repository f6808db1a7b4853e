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
        rows=RULES.settings_rows,
    script:
        "../scripts/settings_table.py"


rule analyze:
    """Summary, break-even, E_sav, correlation, claims and comparison tables of one testbed."""
    input:
        runs="{root}/{testbed}/runs.csv",
        settings=RULES.analysis_settings,
        reference=REFERENCE_FILES,
        claims="paper/reference/claims.yaml",
    output:
        **{name: f"{{root}}/{{testbed}}/{name}.csv" for name in ANALYSIS_TABLES},
    log:
        "{root}/{testbed}/logs/analyze.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        settings=RULES.settings_flag,
        stage=RULES.stage_flag,
        ci_target=REPEATS["ci_target"],
        margin=STUDY.config["verdict"]["margin"],
        reads=STUDY.config["verdict"]["reads_per_write"],
        effect=STUDY.config["verdict"]["effect"],
        looks=len(STUDY.looks) if STUDY.verdict_design else 0,
        moderated="--moderated" if STUDY.moderated_design else "",
    shell:
        "wattzip analyze {input.runs:q} {params.settings} --out {wildcards.root:q}/{wildcards.testbed:q} "
        "--expect {params.stage} --testbed {wildcards.testbed:q} --reference paper/reference --ci-target {params.ci_target} "
        "--margin {params.margin} --reads-per-write {params.reads} --looks {params.looks} "
        "--effect {params.effect} {params.moderated} "
        "2> {log:q}"
