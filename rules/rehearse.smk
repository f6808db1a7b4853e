"""The rehearsal: the whole report from SIMULATED runs, before anything is measured.

Its runs are synthesised from the study's own design (wattzip.model.rehearsal), after the
pre-flight checks that need no machine; the analysis, figures, tables and report are
then made by the same rules as the measured ones, in rehearsal/<study>/.
"""


rule study_config:
    """The merged config in one file, in its own order: what the study's commands read."""
    output:
        "{root}/config.json",
    log:
        "{root}/logs/study_config.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        config=RULES.config_json,
    script:
        "../scripts/study_config.py"


rule simulate_runs:
    """Simulated runs, idle power, provenance and plan of one testbed (no machine used)."""
    input:
        config=f"{REHEARSED}/config.json",
    output:
        runs=f"{REHEARSED}/{{testbed}}/runs.csv",
        overlap=f"{REHEARSED}/{{testbed}}/overlap.txt",
        provenance=f"{REHEARSED}/{{testbed}}/provenance.json",
        provenance_csv=f"{REHEARSED}/{{testbed}}/provenance.csv",
        manifest=f"{REHEARSED}/{{testbed}}/manifest.json",
        idle=f"{REHEARSED}/{{testbed}}/idle/{PRIMARY}.json",
        estimate=f"{REHEARSED}/{{testbed}}/plan/estimate.json",
        crosscheck=f"{REHEARSED}/{{testbed}}/crosscheck.csv",
    log:
        f"{REHEARSED}/{{testbed}}/logs/simulate_runs.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    shell:
        "wattzip simulate --config-file {input.config:q} --testbed {wildcards.testbed:q} "
        "--runs {output.runs:q} 2> {log:q}"


rule rehearsal:
    """The rehearsal's report and every figure and table it holds (wattzip rehearse)."""
    input:
        RULES.trees[REHEARSED].outputs(),
