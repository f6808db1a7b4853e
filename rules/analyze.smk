"""Analysis: every number of the papers from the run records, per testbed."""


rule analyze:
    """Summary, break-even, E_sav, correlation, claims and comparison tables of one testbed."""
    input:
        runs=f"{RESULTS}/{{testbed}}/runs.csv",
        reference=REFERENCE_FILES,
    output:
        **{name: f"{RESULTS}/{{testbed}}/{name}.csv" for name in ANALYSIS_TABLES},
    log:
        f"{RESULTS}/{{testbed}}/logs/analyze.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        out=output_dir,
        ci_target=REPEATS["ci_target"],
    shell:
        "wattzip analyze {input.runs} --out {params.out} --reference paper/reference "
        "--ci-target {params.ci_target} 2> {log}"
