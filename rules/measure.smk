"""Measured runs: one job per setting x file type x codec (and the plain baseline, or
under the verdict design each codec's own plain arm in its job)."""


rule measure_runs:
    """Repeated write/read runs of one codec (or plain; or both, interleaved) on one file,
    alone on the machine."""
    input:
        manifest=input_manifest,
        idle=f"{RESULTS}/{{testbed}}/idle/{{setting}}.json",
        preflight=ancient(f"{RESULTS}/{{testbed}}/preflight.json"),
        previous=previous_runs,
    output:
        f"{RESULTS}/{{testbed}}/runs/{{setting}}/{{ftype}}/{{codec}}.jsonl",
    log:
        f"{RESULTS}/{{testbed}}/logs/runs/{{setting}}/{{ftype}}/{{codec}}.log",
    wildcard_constraints:
        testbed=this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    threads: testbed_threads
    resources:
        measure=1,
        slurm_partition=slurm_partition,
        slurm_account=slurm_account,
        constraint=slurm_constraint,
        slurm_extra=slurm_extra,
    params:
        meter=meter_args,
        setting=setting_args,
        node=expected_node,
        copies=copies,
        threads=codec_threads(),
        journal=f"{RESULTS}/{{testbed}}/journal/{{setting}}/{{ftype}}/{{codec}}.jsonl",
        traces=f"{RESULTS}/{{testbed}}/traces/{{setting}}/{{ftype}}/{{codec}}",
        verified=f"{RESULTS}/{{testbed}}/journal/verified.jsonl",
        repeats=repeat_args,
    shell:
        "wattzip job --testbed {wildcards.testbed} --manifest {input.manifest} "
        "--codec {wildcards.codec} {params.setting} --copies {params.copies} {params.node} "
        "--threads {params.threads} --idle {input.idle} {params.meter} {params.repeats} "
        "--journal {params.journal} --trace-dir {params.traces} "
        "--verify-cache {params.verified} --out {output} 2> {log}"


rule measure_dutycycle:
    """HPC '14: write phases between compute phases, each run the whole workload, alone."""
    input:
        manifest=duty_manifest,
        idle=f"{RESULTS}/{{testbed}}/idle/{{setting}}.json",
        preflight=ancient(f"{RESULTS}/{{testbed}}/preflight.json"),
    output:
        f"{RESULTS}/{{testbed}}/runs/{{setting}}/dutycycle/{{codec}}.jsonl",
    log:
        f"{RESULTS}/{{testbed}}/logs/runs/{{setting}}/dutycycle/{{codec}}.log",
    wildcard_constraints:
        testbed=this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    threads: testbed_threads
    resources:
        measure=1,
        slurm_partition=slurm_partition,
        slurm_account=slurm_account,
        constraint=slurm_constraint,
        slurm_extra=slurm_extra,
    params:
        meter=meter_args,
        setting=setting_args,
        node=expected_node,
        duty=duty_args(),
        threads=codec_threads(),
        journal=f"{RESULTS}/{{testbed}}/journal/{{setting}}/dutycycle/{{codec}}.jsonl",
        traces=f"{RESULTS}/{{testbed}}/traces/{{setting}}/dutycycle/{{codec}}",
        verified=f"{RESULTS}/{{testbed}}/journal/verified.jsonl",
        repeats=repeat_args,
    shell:
        "wattzip job --testbed {wildcards.testbed} --manifest {input.manifest} "
        "--codec {wildcards.codec} {params.setting} {params.duty} {params.node} "
        "--threads {params.threads} --idle {input.idle} {params.meter} {params.repeats} "
        "--journal {params.journal} --trace-dir {params.traces} "
        "--verify-cache {params.verified} --out {output} 2> {log}"


rule runs_table:
    """Every run of the testbed in one tidy table (the run record of the design)."""
    input:
        job_runs,
    output:
        f"{RESULTS}/{{testbed}}/runs.csv",
    log:
        f"{RESULTS}/{{testbed}}/logs/runs_table.log",
    wildcard_constraints:
        testbed=this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    shell:
        "wattzip collect {input} --out {output} 2> {log}"


rule check_overlap:
    """Fail if any two measured intervals overlap: measurement must run alone."""
    input:
        f"{RESULTS}/{{testbed}}/runs.csv",
    output:
        f"{RESULTS}/{{testbed}}/overlap.txt",
    log:
        f"{RESULTS}/{{testbed}}/logs/check_overlap.log",
    wildcard_constraints:
        testbed=this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    shell:
        "wattzip check-overlap {input} --out {output} 2> {log}"


rule crosscheck_hyperfine:
    """Time the same commands with hyperfine; record its mean over the harness's mean."""
    input:
        runs=f"{RESULTS}/{{testbed}}/runs.csv",
        manifest=crosscheck_manifest,
    output:
        f"{RESULTS}/{{testbed}}/crosscheck.csv",
    log:
        f"{RESULTS}/{{testbed}}/logs/crosscheck.log",
    wildcard_constraints:
        testbed=this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    threads: testbed_threads
    resources:
        measure=1,
        slurm_partition=slurm_partition,
        slurm_account=slurm_account,
        constraint=slurm_constraint,
        slurm_extra=slurm_extra,
    params:
        codecs=CROSSCHECK["codecs"],
        runs=CROSSCHECK["runs"],
        setting=PRIMARY,
        unconditioned=crosscheck_unconditioned,
        target=primary_target,
        threads=codec_threads(),
    script:
        "../scripts/crosscheck_hyperfine.py"
