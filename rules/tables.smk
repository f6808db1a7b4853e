"""LaTeX tables (R, booktabs) from the analysis tables, beside the original papers'."""


rule table_of_testbed:
    """A LaTeX table of one testbed: ratios, claims or provenance."""
    input:
        unpack(RULES.table_inputs),
    output:
        "{root}/generated/{testbed}/{table}.tex",
    log:
        "{root}/logs/tables/{testbed}/{table}.log",
    wildcard_constraints:
        table="ratios|claims|provenance",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/table_{wildcards.table}.R"


rule text_cells:
    """The cells of a table of free text (claims, provenance), set by the report's formatter."""
    input:
        unpack(RULES.text_cell_inputs),
    output:
        "{root}/generated/{testbed}/{table}_cells.csv",
    log:
        "{root}/logs/tables/{testbed}/{table}_cells.log",
    wildcard_constraints:
        table="claims|provenance",
    conda:
        "../envs/wattzip.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/text_cells.py"


rule ratio_cells:
    """The ratios' cells, each beside the originals' (SYSTOR '09 Table 3, '11 Table 1)."""
    input:
        summary="{root}/{testbed}/summary.csv",
        table3="paper/reference/systor09_table3_ratios.csv",
        table1="paper/reference/systor11_table1_ratios.csv",
    output:
        "{root}/generated/{testbed}/ratios_cells.csv",
    log:
        "{root}/logs/tables/{testbed}/ratios_cells.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/comparison_cells.py"


rule hpc14_cells:
    """The HPC '14 tables' cells and notes (the originals' values in them), set by the
    report's formatters."""
    input:
        summary="{root}/{testbed}/summary.csv",
        table2="paper/reference/hpc14_table2_patterns.csv",
        table3="paper/reference/hpc14_table3_write_only.csv",
        table4="paper/reference/hpc14_table4_write_compute.csv",
    output:
        filesystem="{root}/generated/{testbed}/hpc14_filesystem.csv",
        duty="{root}/generated/{testbed}/hpc14_duty.csv",
        notes="{root}/generated/{testbed}/hpc14_notes.csv",
    log:
        "{root}/logs/tables/{testbed}/hpc14_cells.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        code=REPORT_CODE,
        duty_codecs=DUTY_CODECS,
    script:
        "../scripts/hpc14_cells.py"


rule table_hpc14:
    """Filesystem compression and write/compute duty cycles beside HPC '14 Tables I-IV."""
    input:
        filesystem="{root}/generated/{testbed}/hpc14_filesystem.csv",
        duty="{root}/generated/{testbed}/hpc14_duty.csv",
        notes="{root}/generated/{testbed}/hpc14_notes.csv",
    output:
        "{root}/generated/{testbed}/hpc14.tex",
    log:
        "{root}/logs/tables/{testbed}/hpc14.log",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/table_hpc14.R"


rule breakeven_cells:
    """Break-even cells, each pair beside one original's (Tables 4/5, the slides), and the
    table's note."""
    input:
        breakeven="{root}/{testbed}/breakeven.csv",
        summary="{root}/{testbed}/summary.csv",
        reference=RULES.breakeven_reference,
    output:
        "{root}/generated/{testbed}/breakeven_{original}_cells.csv",
    log:
        "{root}/logs/tables/{testbed}/breakeven_{original}_cells.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        code=REPORT_CODE,
        metrics=RULES.breakeven_original(1),
        original=RULES.breakeven_original(2),
    script:
        "../scripts/comparison_cells.py"


rule table_breakeven:
    """Break-even ratios beside one original table (Tables 4/5, the talk's slides)."""
    input:
        cells="{root}/generated/{testbed}/breakeven_{original}_cells.csv",
    output:
        "{root}/generated/{testbed}/breakeven_{original}.tex",
    log:
        "{root}/logs/tables/{testbed}/breakeven_{original}.log",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/table_breakeven.R"


rule testbed_cells:
    """Every testbed's text break-even cells, then the slides' machines'."""
    input:
        breakeven=RULES.testbed_tables("breakeven.csv"),
        summary=RULES.testbed_tables("summary.csv"),
        slides=expand(
            "paper/reference/systor09_slides_breakeven_{machine}.csv",
            machine=["server", "desktop", "laptop"],
        ),
    output:
        "{root}/generated/testbeds_cells.csv",
    log:
        "{root}/logs/tables/testbeds_cells.log",
    conda:
        "../envs/wattzip.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/comparison_cells.py"


rule table_testbeds:
    """Text break-even of every testbed beside the talk's server, desktop and laptop."""
    input:
        cells="{root}/generated/testbeds_cells.csv",
        # Whether the study is a rehearsal (is_simulated), one without text files too.
        summary=RULES.testbed_tables("summary.csv"),
    output:
        "{root}/generated/testbeds.tex",
    log:
        "{root}/logs/tables/testbeds.log",
    conda:
        "../envs/r.yaml"
    params:
        code=REPORT_CODE,
    script:
        "../scripts/table_testbeds.R"
