# Text-file break-even (E / T) of every testbed beside the slides' server, desktop and laptop.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

be <- rbindlist(lapply(snakemake@input[["breakeven"]], read_table), fill = TRUE)
be <- be[file_type == "text" & primary == TRUE]
if (nrow(be[metric %in% c("E", "T")]) == 0) { # a study without text files (HPC '14 patterns)
  write_tabular(data.table(x = "no text file in this study"), snakemake@output[[1]], "l",
                header = "Tool")
  quit(save = "no")
}
# Each testbed's column says whether its own energy is estimated: one note cannot.
estimated_testbeds <- be[estimated == TRUE, unique(testbed)]
be[testbed %in% estimated_testbeds, testbed := paste(testbed, "(ESTIMATED)")]
# Our cells as the analysis set them (cell_tex: a dagger where an estimated verdict
# depends on the model's coefficients, wattzip.analysis.robustness.cell_tex).
cells <- dcast(be[metric %in% c("E", "T")], testbed + codec ~ metric, value.var = "cell_tex")
cells[, cell := paste(E, T, sep = " / ")]
originals <- rbindlist(lapply(snakemake@input[["slides"]], function(path) {
  d <- read_reference(path)[file_type == "text"]
  w <- dcast(d, codec ~ metric, value.var = "display_tex")
  w[, .(testbed = sprintf("paper %s", sub(".*_([a-z]+)\\.csv$", "\\1", path)), codec,
        cell = paste(E, T, sep = " / "))]
}))
dt <- rbind(cells[, .(testbed, codec, cell)], originals)
codecs <- unique(be$codec)
dt <- dt[codec %in% codecs]
wide <- dcast(dt, codec ~ factor(testbed, levels = unique(dt$testbed)), value.var = "cell", fill = "--")
# The codecs in the paper's order (order_codecs), by their tools and levels in the summaries.
tools <- rbindlist(lapply(snakemake@input[["summary"]], read_summary), fill = TRUE)
wide <- merge(wide, unique(tools[, .(codec, tool, level)], by = "codec"), by = "codec")
wide[, codec := order_codecs(wide)]
setorder(wide, codec)
wide[, c("tool", "level") := NULL]
wide[, codec := as.character(codec)]
write_tabular(
  wide, snakemake@output[[1]], paste0("l", strrep("c", ncol(wide) - 1)),
  header = c("Tool", tex_escape(names(wide)[-1])),
  note = paste(c("Text file, $n_{be}^{E}$ / $n_{be}^{T}$. The last columns are the SYSTOR '09 slides' server, desktop and laptop.",
                 estimated_note(any(be$estimated)), model_dependent_note(any(be$estimated))), collapse = " ")
)
