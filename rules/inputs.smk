"""Input files of every type at the study's size, with their manifest.

One testbed: each file is generated on it. Several testbeds: each file is
generated once (input_master, where the workflow runs) and staged to every
testbed's own disk, verified byte for byte, so that all compare the same bytes.
Manifests live with the results; the bytes on the testbed's disk (input_dir).
"""

if STUDY.multi:

    localrules:
        input_master,

    rule input_master:
        """One input file for every testbed, generated once (not measured)."""
        input:
            rehearsal=ancient(f"{REHEARSED}/paper.pdf"),
        output:
            data=f"{MEASURED}/inputs/{{ftype}}.bin",
            manifest=f"{MEASURED}/inputs/{{ftype}}.bin.json",
        log:
            f"{MEASURED}/logs/inputs/{{ftype}}.log",
        conda:
            "../envs/wattzip.yaml"
        params:
            size=config["file_size"],
            seed=config["seed"],
            sources=RULES.input_sources,
        shell:
            "wattzip gen {wildcards.ftype:q} --size {params.size:q} --seed {params.seed:q} "
            "{params.sources} --out {output.data:q} --manifest {output.manifest:q} 2> {log:q}"

    rule input_file:
        """The input file staged to the testbed's own disk, its sha256 checked (not measured)."""
        input:
            master=f"{MEASURED}/inputs/{{ftype}}.bin.json",
            preflight=ancient(f"{MEASURED}/{{testbed}}/preflight.json"),
        output:
            manifest=f"{MEASURED}/{{testbed}}/inputs/{{ftype}}.bin.json",
        log:
            f"{MEASURED}/{{testbed}}/logs/inputs/{{ftype}}.log",
        wildcard_constraints:
            testbed=RULES.this_testbed(),
        conda:
            "../envs/wattzip.yaml"
        resources:
            **SLURM,
        params:
            data=RULES.input_data,
        shell:
            "wattzip stage {input.master:q} --out {params.data:q} "
            "--manifest {output.manifest:q} 2> {log:q}"

else:

    rule input_file:
        """One input file of exact size on the testbed and its manifest (not measured)."""
        input:
            ancient(f"{MEASURED}/{{testbed}}/preflight.json"),
        output:
            manifest=f"{MEASURED}/{{testbed}}/inputs/{{ftype}}.bin.json",
        log:
            f"{MEASURED}/{{testbed}}/logs/inputs/{{ftype}}.log",
        wildcard_constraints:
            testbed=RULES.this_testbed(),
        conda:
            "../envs/wattzip.yaml"
        resources:
            **SLURM,
        params:
            data=RULES.input_data,
            size=config["file_size"],
            seed=config["seed"],
            sources=RULES.input_sources,
        shell:
            "wattzip gen {wildcards.ftype:q} --size {params.size:q} --seed {params.seed:q} "
            "{params.sources} --out {params.data:q} --manifest {output.manifest:q} 2> {log:q}"


rule manifest:
    """The input manifest of the testbed: what every file is and where it came from."""
    input:
        RULES.manifests,
    output:
        f"{MEASURED}/{{testbed}}/manifest.json",
    log:
        f"{MEASURED}/{{testbed}}/logs/manifest.log",
    wildcard_constraints:
        testbed=RULES.this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    script:
        "../scripts/manifest.py"
