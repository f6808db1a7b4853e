"""Before measuring: pre-flight checks, testbed provenance, idle power."""


rule preflight:
    """Stop before any work if a codec, the meter, a factor or disk space is missing."""
    output:
        f"{RESULTS}/{{testbed}}/preflight.json",
    log:
        f"{RESULTS}/{{testbed}}/logs/preflight.log",
    wildcard_constraints:
        testbed=this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    resources:
        slurm_partition=slurm_partition,
        slurm_account=slurm_account,
        constraint=slurm_constraint,
        slurm_extra=slurm_extra,
    params:
        codecs=list(dict.fromkeys(CODECS + [c for c in DUTY_CODECS if c != "plain"])),
        settings=testbed_settings,
        file_size=FILE_SIZE,
        duty_phases=DUTY.phases if DUTY else 1,
        meter=testbed_meter,
        input_dir=testbed_input_dir,
        input_files=testbed_input_files,
        node=expected_node,
    script:
        "../scripts/preflight.py"


rule provenance:
    """CPU, memory, kernel, disk, scheduler, governor, tool versions and meter."""
    output:
        json=f"{RESULTS}/{{testbed}}/provenance.json",
        csv=f"{RESULTS}/{{testbed}}/provenance.csv",
    log:
        f"{RESULTS}/{{testbed}}/logs/provenance.log",
    wildcard_constraints:
        testbed=this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    resources:
        slurm_partition=slurm_partition,
        slurm_account=slurm_account,
        constraint=slurm_constraint,
        slurm_extra=slurm_extra,
    params:
        target=primary_target,
        codecs=" ".join(CODECS),
        meter=meter_args,
        description=testbed_description,
    shell:
        "mkdir -p {params.target:q} && wattzip provenance {params.meter} "
        "--target-dir {params.target:q} --codecs {params.codecs} "
        "--testbed {wildcards.testbed} --description {params.description:q} "
        "--out {output.json} --csv {output.csv} 2> {log}"


rule idle_power:
    """Average idle power of the testbed in one setting (paper 5.1), alone on the machine."""
    input:
        ancient(f"{RESULTS}/{{testbed}}/preflight.json"),
    output:
        f"{RESULTS}/{{testbed}}/idle/{{setting}}.json",
    log:
        f"{RESULTS}/{{testbed}}/logs/idle/{{setting}}.log",
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
        windows=STUDY.config["idle"]["count"],
        min_windows=STUDY.idle_first_look,
        ci_target=STUDY.config["idle"]["ci_target"],
        seconds=STUDY.config["idle"]["seconds"],
        max_other_load=STUDY.config["idle"]["max_other_load"],
        journal=f"{RESULTS}/{{testbed}}/journal/idle/{{setting}}.jsonl",
    shell:
        "wattzip idle {params.meter} {params.setting} --count {params.windows} "
        "--min-count {params.min_windows} --ci-target {params.ci_target} "
        "--seconds {params.seconds} --max-other-load {params.max_other_load} "
        "--journal {params.journal} --out {output} 2> {log}"


rule plan:
    """How long the study takes here, from a short cached pilot (before it is measured)."""
    input:
        ancient(f"{RESULTS}/{{testbed}}/preflight.json"),
    output:
        f"{RESULTS}/{{testbed}}/plan/estimate.json",
    log:
        f"{RESULTS}/{{testbed}}/logs/plan.log",
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
        config=json.dumps(config),
    shell:
        "wattzip plan --config-json {params.config:q} --out {output} --quiet > {log} 2>&1"
