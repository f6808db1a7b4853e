# Break-even read-to-write ratios reproduced beside an original table (Tables 4/5, the slides).
# Each cell, the original's beside it, and the note with its marks' legends are set by rule
# breakeven_cells (wattzip.report.comparison_cells): this script only places them.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

cells <- read_summary(snakemake@input[["cells"]], "cell")
wide <- wide_by_file_type(cells)
write_tabular(
  wide, snakemake@output[[1]], paste0("l", strrep("c", ncol(wide) - 1)),
  header = c("Tool", names(wide)[-1]), note = table_note(cells)
)
