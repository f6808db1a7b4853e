"""The report: generated numbers and passages, then latexmk."""


rule paper_macros:
    """Every number of the text, the abstract and the list of per-file-type figures."""
    input:
        unpack(macro_inputs),
    output:
        macros="paper/generated/macros.tex",
        abstract="paper/generated/abstract.tex",
        figures="paper/generated/figures.tex",
        factors="paper/generated/factors.tex",
        testbed_list="paper/generated/testbed_list.tex",
    log:
        f"{RESULTS}/{TESTBED}/logs/paper_macros.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        testbed=TESTBED,
        file_size=config["file_size"],
        file_types=FILE_TYPES,
        codecs=CODECS,
        repeats=REPEATS,
        repeat_design=STUDY.describe_repeats(),
        varied_factors=varied_factors(),
        factor_values=factor_values(),
        emulated_input_layouts=STUDY.emulated_input_layouts(),
        hpc14=has_hpc14(),
        testbeds=all_testbeds(),
        descriptions={t: TESTBEDS[t].description for t in TESTBEDS},
        primary=PRIMARY,
        primary_rule=STUDY.primary_rule,
    script:
        "../scripts/paper_macros.py"


rule appendix:
    """The claims-to-experiments appendix: every claim, its commands, duration and results."""
    input:
        claims=f"{RESULTS}/{{testbed}}/claims.csv",
        runs=f"{RESULTS}/{{testbed}}/runs.csv",
        registry="paper/reference/claims.yaml",
    output:
        markdown=f"{RESULTS}/{{testbed}}/appendix.md",
        latex="paper/generated/{testbed}/appendix.tex",
    log:
        f"{RESULTS}/{{testbed}}/logs/appendix.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        configfiles=[os.path.relpath(str(p)) for p in workflow.overwrite_configfiles],
    script:
        "../scripts/appendix.py"


rule paper:
    """The report PDF: reproduced tables and figures beside the originals, claim verdicts."""
    input:
        "paper/main.tex",
        rules.paper_macros.output,
        paper_tables(),
        paper_figures(),
    output:
        f"{RESULTS}/paper.pdf",
    log:
        f"{RESULTS}/{TESTBED}/logs/paper.log",
    conda:
        "../envs/latex.yaml"
    params:
        build=f"{RESULTS}/paper-build",
    shell:
        "mkdir -p {params.build} && cd paper && latexmk -pdf -interaction=nonstopmode "
        "-halt-on-error -outdir=../{params.build} main.tex > ../{log} 2>&1 && cd .. "
        "&& cp {params.build}/main.pdf {output}"
