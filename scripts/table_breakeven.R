# Break-even read-to-write ratios reproduced beside an original table (Tables 4/5, the slides).
# Each cell, the original's beside it, and the note with its marks' legends are set by rule
# breakeven_cells (wattzip.report.comparison_cells): this script only places them.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

write_by_file_type(snakemake@input[["cells"]], snakemake@output[[1]], "c")
