# Compression ratios reproduced beside SYSTOR '09 Table 3 (and SYSTOR '11 Table 1 where levels ran).
# Each cell, the original's beside it, is set by rule ratio_cells (wattzip.report.comparison_cells):
# this script only places it.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

wide <- wide_by_file_type(read_summary(snakemake@input[["cells"]], "cell"))
write_tabular(
  wide, snakemake@output[[1]], paste0("l", strrep("r", ncol(wide) - 1)),
  header = c("Tool", names(wide)[-1]),
  note = "This testbed's ratio, the original paper's in parentheses (SYSTOR '09 Table 3; SYSTOR '11 Table 1 for other levels)."
)
