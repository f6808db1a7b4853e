"""Input files of every type at the study's size, with their manifest."""


rule input_file:
    """One input file of exact size and its manifest entry (not measured)."""
    input:
        ancient(f"{RESULTS}/{TESTBED}/preflight.json"),
    output:
        data=f"{INPUT_DIR}/{{ftype}}.bin",
        manifest=f"{INPUT_DIR}/{{ftype}}.bin.json",
    log:
        f"{RESULTS}/{TESTBED}/logs/inputs/{{ftype}}.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        size=config["file_size"],
        seed=config.get("seed", 1),
        sources=input_sources,
    shell:
        "wattzip gen {wildcards.ftype} --size {params.size} --seed {params.seed} "
        "{params.sources} --out {output.data} --manifest {output.manifest} 2> {log}"


rule manifest:
    """The input manifest of the testbed: what every file is and where it came from."""
    input:
        expand(f"{INPUT_DIR}/{{ftype}}.bin.json", ftype=FILE_TYPES),
    output:
        f"{RESULTS}/{{testbed}}/manifest.json",
    log:
        f"{RESULTS}/{{testbed}}/logs/manifest.log",
    wildcard_constraints:
        testbed=this_testbed(),
    conda:
        "../envs/wattzip.yaml"
    script:
        "../scripts/manifest.py"
