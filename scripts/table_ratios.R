# Compression ratios reproduced beside SYSTOR '09 Table 3 (and SYSTOR '11 Table 1 where levels ran).
# Each cell, the original's beside it, and the note are set by rule ratio_cells
# (wattzip.report.comparison_cells): this script only places them.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

cells <- read_summary(snakemake@input[["cells"]], "cell")
wide <- wide_by_file_type(cells)
write_tabular(
  wide, snakemake@output[[1]], paste0("l", strrep("r", ncol(wide) - 1)),
  header = c("Tool", names(wide)[-1]), note = table_note(cells)
)
