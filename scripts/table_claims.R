# The original papers' claims and their verdicts on this testbed. Every cell is set by
# rule text_cells (wattzip.report.text_cells); this script lays them out.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

claims <- read_table(snakemake@input[["cells"]], c("claim", "source", "verdict", "evidence"))
rows <- claims[, .(claim, source, verdict, evidence)]
dir.create(dirname(snakemake@output[[1]]), showWarnings = FALSE, recursive = TRUE)
lines <- c(
  "\\begin{longtable}{>{\\raggedright\\arraybackslash}p{0.26\\linewidth}>{\\raggedright\\arraybackslash}p{0.12\\linewidth}>{\\raggedright\\arraybackslash}p{0.12\\linewidth}>{\\raggedright\\arraybackslash}p{0.40\\linewidth}}",
  "\\toprule Claim & Where & Verdict & Numbers \\\\ \\midrule \\endhead",
  paste0(apply(as.matrix(rows), 1, paste, collapse = " & "), " \\\\"),
  "\\bottomrule",
  "\\end{longtable}",
  if (any(claims$estimated)) "{\\footnotesize $^{\\ast}$ The verdict rests on ESTIMATED energy (CPU-time model, no power meter); decided again at the coefficient table's extremes, it is robust to the model or depends on it.}" else ""
)
write_tex_lines(lines, snakemake@output[[1]])
