# Compression ratios reproduced beside SYSTOR '09 Table 3 (and SYSTOR '11 Table 1 where levels ran).
# Each cell, the original's beside it, and the note are set by rule ratio_cells
# (wattzip.report.comparison_cells): this script only places them.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

write_by_file_type(snakemake@input[["cells"]], snakemake@output[[1]], "r")
