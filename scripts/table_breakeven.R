# Break-even read-to-write ratios reproduced beside an original table (Tables 4/5, the slides).
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

metrics <- snakemake@params[["metrics"]]
be <- primary_rows(read_table(snakemake@input[["breakeven"]]))
ref <- read_reference(snakemake@input[["reference"]])
summary <- read_summary(snakemake@input[["summary"]])
tools <- unique(summary[codec != "plain", .(codec, tool, level)])
pair <- function(d, col) {
  w <- dcast(d[metric %in% metrics], codec + file_type ~ factor(metric, levels = metrics), value.var = col)
  w[, cell := paste(get(metrics[1]), get(metrics[2]), sep = " / ")]
  w[, .(codec, file_type, cell)]
}
# Our cells as the analysis set them (cell_tex: a dagger where an estimated verdict
# depends on the model's coefficients, wattzip.analysis.robustness.cell_tex).
mine <- dcast(be[metric %in% metrics], codec + file_type ~ factor(metric, levels = metrics),
              value.var = "cell_tex")
mine <- mine[, .(codec, file_type, cell = paste(get(metrics[1]), get(metrics[2]), sep = " / "))]
orig <- pair(ref, "display_tex")
setnames(orig, "cell", "paper")
dt <- merge(merge(mine, orig, by = c("codec", "file_type"), all.x = TRUE), tools, by = "codec")
wide <- wide_by_file_type(dt)
estimated <- any(be$estimated)
write_tabular(
  wide, snakemake@output[[1]], paste0("l", strrep("c", ncol(wide) - 1)),
  header = c("Tool", names(wide)[-1]),
  note = paste(
    sprintf("$n_{be}$ for %s on this testbed; the original (%s) in parentheses.",
            paste(metrics, collapse = " / "), tex_escape(snakemake@params[["original"]])),
    "$\\forall$: compression pays at any ratio; $\\times$: never; $\\le$: pays only up to that many reads per write;",
    # The levels as the analysis decided the cells (wattzip.analysis.analysis_options), not typed here.
    paste0("$\\sim\\!10^{k}$: magnitude; \\textsuperscript{?}: the Student-$t$ (Welch) intervals of the extra write cost and the saving per read (",
           be$levels_tex[1], ") cannot decide the kind."),
    estimated_note(estimated),
    model_dependent_note(estimated)
  )
)
