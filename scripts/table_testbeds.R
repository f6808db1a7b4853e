# Text-file break-even (E / T) of every testbed beside the slides' server, desktop and laptop.
# Each cell, each column's label and the note are set by rule testbed_cells
# (wattzip.report.comparison_cells): this script orders the codecs and lays the cells out.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

cells <- read_summary(snakemake@input[["cells"]], "cell")
if (nrow(cells) == 0) { # a study without text files (HPC '14 patterns)
  write_tabular(data.table(x = "no text file in this study"), snakemake@output[[1]], "l",
                header = "Tool")
  quit(save = "no")
}
# The columns in the order the cells come: the testbeds', then the slides' machines'.
wide <- dcast(cells, codec ~ factor(testbed, levels = unique(cells$testbed)), value.var = "cell", fill = "--")
# The codecs in the paper's order (order_codecs), by their tools and levels.
wide <- merge(wide, unique(cells[, .(codec, tool, level)], by = "codec"), by = "codec")
wide[, codec := order_codecs(wide)]
setorder(wide, codec)
wide[, c("tool", "level") := NULL]
wide[, codec := as.character(codec)]
write_tabular(
  wide, snakemake@output[[1]], paste0("l", strrep("c", ncol(wide) - 1)),
  header = c("Tool", tex_escape(names(wide)[-1])), note = table_note(cells)
)
