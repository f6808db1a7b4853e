# The original papers' claims and their verdicts on this testbed. Every cell and the note
# are set by rule text_cells (wattzip.report.text_cells); this script lays them out.
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
  # the star's legend, where a verdict rests on estimated energy (wattzip.report.legends)
  if (is.null(table_note(claims))) "" else sprintf("{\\footnotesize %s}", table_note(claims))
)
write_tex_lines(lines, snakemake@output[[1]])
