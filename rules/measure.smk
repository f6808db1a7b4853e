"""Measured runs: one job per setting x file type x codec (and the plain baseline, or
under the verdict design each codec's own plain arm in its job, under the moderated
design pairs of the setting and file type's one shared plain arm)."""


rule job_spec:
    """A measurement job's slice of the study, as the model writes it."""
    output:
        f"{MEASURED}/{{testbed}}/specs/{{setting}}/{{part}}/{{codec}}.json",
    log:
        f"{MEASURED}/{{testbed}}/logs/specs/{{setting}}/{{part}}/{{codec}}.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
        part=r"[^/.]+",
    conda:
        "../envs/wattzip.yaml"
    params:
        spec=STUDY.job_spec_text,
    shell:
        SPEC_COMMAND


# A checkpoint, as rule paper is: under the moderated design each job waits for the one
# measured before it through an ancient input, and Snakemake 9 plans nothing behind an
# ancient input of a job it reruns (snakemake/snakemake#4166). As a rule, a change of
# every job's spec measured one job again per invocation, each report made from old and
# new runs.
checkpoint measure_runs:
    """Repeated write/read runs of one codec (or plain; or both, interleaved) on one file,
    alone on the machine."""
    input:
        manifest=f"{MEASURED}/{{testbed}}/inputs/{{ftype}}.bin.json",
        spec=f"{MEASURED}/{{testbed}}/specs/{{setting}}/{{ftype}}/{{codec}}.json",
        idle=f"{MEASURED}/{{testbed}}/idle/{{setting}}.json",
        preflight=ancient(f"{MEASURED}/{{testbed}}/preflight.json"),
        previous=previous_runs,
    output:
        f"{MEASURED}/{{testbed}}/runs/{{setting}}/{{ftype}}/{{codec}}.jsonl",
    log:
        f"{MEASURED}/{{testbed}}/logs/runs/{{setting}}/{{ftype}}/{{codec}}.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    threads: THREADS
    resources:
        **SLURM,
        measure=1,
    params:
        **job_paths("{ftype}"),
    shell:
        JOB_COMMAND


rule measure_dutycycle:
    """HPC '14: write phases between compute phases, each run the whole workload, alone."""
    input:
        manifest=f"{MEASURED}/{{testbed}}/inputs/{DUTY.file_type if DUTY else 'none'}.bin.json",
        spec=f"{MEASURED}/{{testbed}}/specs/{{setting}}/dutycycle/{{codec}}.json",
        idle=f"{MEASURED}/{{testbed}}/idle/{{setting}}.json",
        preflight=ancient(f"{MEASURED}/{{testbed}}/preflight.json"),
    output:
        f"{MEASURED}/{{testbed}}/runs/{{setting}}/dutycycle/{{codec}}.jsonl",
    log:
        f"{MEASURED}/{{testbed}}/logs/runs/{{setting}}/dutycycle/{{codec}}.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    threads: THREADS
    resources:
        **SLURM,
        measure=1,
    params:
        **job_paths("dutycycle"),
    shell:
        JOB_COMMAND


rule runs_table:
    """Every run of the testbed in one tidy table (the run record of the design)."""
    input:
        RULES.job_runs,
    output:
        f"{MEASURED}/{{testbed}}/runs.csv",
    log:
        f"{MEASURED}/{{testbed}}/logs/runs_table.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    shell:
        "wattzip collect {input:q} --out {output:q} 2> {log:q}"


rule check_overlap:
    """Fail if any two measured intervals overlap: measurement must run alone."""
    input:
        f"{MEASURED}/{{testbed}}/runs.csv",
    output:
        f"{MEASURED}/{{testbed}}/overlap.txt",
    log:
        f"{MEASURED}/{{testbed}}/logs/check_overlap.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    shell:
        "wattzip check-overlap {input:q} --out {output:q} 2> {log:q}"


rule crosscheck_hyperfine:
    """Time the same commands with hyperfine; record its mean over the harness's mean."""
    input:
        runs=f"{MEASURED}/{{testbed}}/runs.csv",
        manifest=f"{MEASURED}/{{testbed}}/inputs/{CROSSCHECK['file_type']}.bin.json",
    output:
        f"{MEASURED}/{{testbed}}/crosscheck.csv",
    log:
        f"{MEASURED}/{{testbed}}/logs/crosscheck.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    threads: THREADS
    resources:
        **SLURM,
        measure=1,
    params:
        codecs=CROSSCHECK["codecs"],
        runs=CROSSCHECK["runs"],
        setting=PRIMARY,
        unconditioned=RULES.crosscheck_unconditioned,
        target=RULES.primary_target,
        threads=STUDY.primary.threads,
    script:
        "../scripts/crosscheck_hyperfine.py"
