"""The report: its LaTeX tables, generated numbers and passages, the appendix, then
latexmk, per tree."""


rule tables_of_testbed:
    """Every LaTeX table of one testbed: ratios and break-even beside the originals,
    claims, provenance (and HPC '14's)."""
    input:
        unpack(RULES.table_inputs),
    output:
        **RULES.table_outputs(),
    log:
        "{root}/logs/tables/{testbed}/tables.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        code=REPORT_CODE,
        duty_codecs=DUTY_CODECS,
    script:
        "../scripts/tex_tables.py"


rule table_testbeds:
    """Text break-even of every testbed beside the talk's server, desktop and laptop."""
    input:
        breakeven=RULES.testbed_tables("breakeven.csv"),
        summary=RULES.testbed_tables("summary.csv"),
        slides=expand(
            "paper/reference/systor09_slides_breakeven_{machine}.csv",
            machine=["server", "desktop", "laptop"],
        ),
    output:
        testbeds="{root}/generated/testbeds.tex",
    log:
        "{root}/logs/tables/testbeds.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/tex_tables.py"


rule paper_macros:
    """Every number of the text, the abstract and the list of per-file-type figures."""
    input:
        unpack(RULES.macro_inputs),
    output:
        macros="{root}/generated/macros.tex",
        abstract="{root}/generated/abstract.tex",
        figures="{root}/generated/figures.tex",
        factors="{root}/generated/factors.tex",
        testbed_list="{root}/generated/testbed_list.tex",
    log:
        "{root}/logs/paper_macros.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        code=REPORT_CODE,
        design=RULES.macro_params,
    script:
        "../scripts/paper_macros.py"


rule appendix:
    """The claims-to-experiments appendix: every claim, its commands, duration and results."""
    input:
        claims="{root}/{testbed}/claims.csv",
        runs="{root}/{testbed}/runs.csv",
        registry="paper/reference/claims.yaml",
    output:
        markdown="{root}/{testbed}/appendix.md",
        latex="{root}/generated/{testbed}/appendix.tex",
    log:
        "{root}/{testbed}/logs/appendix.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        code=REPORT_CODE,
        configfiles=[os.path.relpath(str(p)) for p in workflow.overwrite_configfiles],
    script:
        "../scripts/appendix.py"


# A checkpoint, so that once a tree's PDF is made Snakemake decides again what the jobs
# after it need: the measured tree waits for the rehearsal's PDF through an ancient
# input, and Snakemake 9 leaves every job behind an ancient input of a rerun job out
# of its plan (snakemake/snakemake#4166). As a rule, an upgrade of wattzip rebuilt
# the rehearsal and left the measured report stale until a second invocation.
checkpoint paper:
    """The report PDF: reproduced tables and figures beside the originals, claim verdicts."""
    input:
        source="paper/main.tex",
        generated=RULES.paper_inputs,
    output:
        "{root}/paper.pdf",
    log:
        "{root}/logs/paper.log",
    conda:
        "../envs/latex.yaml"
    shell:
        "exec > {log:q} 2>&1; cp {input.source:q} {wildcards.root:q}/main.tex && "
        "cd {wildcards.root:q} && latexmk -pdf -interaction=nonstopmode -halt-on-error "
        "-outdir=paper-build main.tex && cp paper-build/main.pdf paper.pdf"
