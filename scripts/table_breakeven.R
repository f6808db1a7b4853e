# Break-even read-to-write ratios reproduced beside an original table (Tables 4/5, the slides).
# Each cell, the original's beside it, is set by rule breakeven_cells
# (wattzip.report.comparison_cells): this script only places it.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

metrics <- snakemake@params[["metrics"]]
cells <- read_summary(snakemake@input[["cells"]], "cell")
wide <- wide_by_file_type(cells)
estimated <- any(cells$estimated)
write_tabular(
  wide, snakemake@output[[1]], paste0("l", strrep("c", ncol(wide) - 1)),
  header = c("Tool", names(wide)[-1]),
  note = paste(
    sprintf("$n_{be}$ for %s on this testbed; the original (%s) in parentheses.",
            paste(metrics, collapse = " / "), tex_escape(snakemake@params[["original"]])),
    "$\\forall$: compression pays at any ratio; $\\times$: never; $\\le$: pays only up to that many reads per write;",
    # The intervals as the text names them (\BeIntervals: Welch's or moderated, by the design,
    # wattzip.model.repeat_design.intervals) and the levels as the analysis decided the
    # cells (wattzip.analysis.analysis_options): neither is typed here.
    paste0("$\\sim\\!10^{k}$: magnitude; \\textsuperscript{?}: the \\BeIntervals{} intervals of the extra write cost and the saving per read (",
           cells$levels_tex[1], ") cannot decide the kind."),
    estimated_note(estimated),
    model_dependent_note(estimated)
  )
)
