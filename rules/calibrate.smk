"""Before measuring: pre-flight checks, testbed provenance, idle power."""


# A checkpoint, as rule paper is: the jobs after it wait for it through ancient inputs,
# so a pre-flight checked again (a codec added to the config) plans them anew.
checkpoint preflight:
    """Stop before any work if a codec, the meter, a factor or disk space is missing."""
    input:
        # The rehearsal built the whole report from simulated runs first: a study whose
        # rehearsal fails measures nothing (ancient: rehearsing again measures nothing anew).
        rehearsal=ancient(f"{REHEARSED}/paper.pdf"),
    output:
        f"{MEASURED}/{{testbed}}/preflight.json",
    log:
        f"{MEASURED}/{{testbed}}/logs/preflight.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    resources:
        **SLURM,
    params:
        codecs=list(dict.fromkeys(CODECS + [c for c in DUTY_CODECS if c != "plain"])),
        settings=RULES.testbed_settings,
        file_size=STUDY.file_size_bytes,
        duty_phases=DUTY.phases if DUTY else 1,
        meter=RULES.testbed_meter,
        input_dir=RULES.input_dir,
        input_files=RULES.input_files,
        expect=RULES.expect,
        pinned=RULES.pinned_corpora,
    script:
        "../scripts/preflight.py"


rule provenance:
    """CPU, memory, kernel, disk, scheduler, governor, tool versions and meter."""
    input:
        ancient(f"{MEASURED}/{{testbed}}/preflight.json"),
    output:
        json=f"{MEASURED}/{{testbed}}/provenance.json",
        csv=f"{MEASURED}/{{testbed}}/provenance.csv",
    log:
        f"{MEASURED}/{{testbed}}/logs/provenance.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    resources:
        **SLURM,
    params:
        target=RULES.primary_target,
        medium=RULES.primary_medium,
        codecs=CODECS,
        meter=RULES.meter_config,
        machine=RULES.machine_config,
        description=RULES.testbed_description,
    shell:
        "wattzip provenance --meter-config {params.meter:q} --machine {params.machine:q} "
        "--target-dir {params.target:q} --medium {params.medium:q} "
        "--codecs {params.codecs:q} "
        "--testbed {wildcards.testbed:q} --description {params.description:q} "
        "--out {output.json:q} --csv {output.csv:q} 2> {log:q}"


rule idle_spec:
    """The idle calibration's slice of the study, as the model writes it."""
    output:
        f"{MEASURED}/{{testbed}}/specs/idle/{{setting}}.json",
    log:
        f"{MEASURED}/{{testbed}}/logs/specs/idle/{{setting}}.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    params:
        spec=STUDY.idle_spec_text,
    shell:
        SPEC_COMMAND


rule idle_power:
    """Average idle power of the testbed in one setting (paper 5.1), alone on the machine."""
    input:
        preflight=ancient(f"{MEASURED}/{{testbed}}/preflight.json"),
        spec=f"{MEASURED}/{{testbed}}/specs/idle/{{setting}}.json",
    output:
        f"{MEASURED}/{{testbed}}/idle/{{setting}}.json",
    log:
        f"{MEASURED}/{{testbed}}/logs/idle/{{setting}}.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    threads: THREADS
    resources:
        **SLURM,
        measure=1,
    params:
        journal=f"{MEASURED}/{{testbed}}/journal/idle/{{setting}}.jsonl",
    shell:
        "wattzip idle --spec {input.spec:q} --journal {params.journal:q} "
        "--out {output:q} 2> {log:q}"


rule plan:
    """How long the study takes here, from a short cached pilot (before it is measured)."""
    input:
        preflight=ancient(f"{MEASURED}/{{testbed}}/preflight.json"),
        config=f"{MEASURED}/config.json",
    output:
        f"{MEASURED}/{{testbed}}/plan/estimate.json",
    log:
        f"{MEASURED}/{{testbed}}/logs/plan.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    threads: THREADS
    resources:
        **SLURM,
        measure=1,
    shell:
        "wattzip plan --config-file {input.config:q} --out {output:q} --quiet > {log:q} 2>&1"
