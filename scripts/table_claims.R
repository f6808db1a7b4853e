# The original papers' claims and their verdicts on this testbed.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

claims <- read_table(snakemake@input[["claims"]])
claims <- claims[setting == "all" | primary == TRUE]
if (!"model_robustness" %in% names(claims)) claims[, model_robustness := ""]
claims[is.na(model_robustness), model_robustness := ""]
# "not testable here: <reason>" shows its reason with the numbers, not in the verdict column.
untestable <- startsWith(claims$verdict, "not testable")
claims[untestable, evidence := sub("^not testable here: ", "", verdict)]
claims[untestable, verdict := "not testable here"]
rows <- claims[, .(
  claim = tex_text(claim), source = tex_text(source),
  verdict = paste0(
    fifelse(verdict %in% c("holds", "refuted"), sprintf("\\textbf{%s}", verdict), "\\emph{not testable here}"),
    fifelse(estimated, "$^{\\ast}$", ""),
    fifelse(model_robustness != "", sprintf(" (%s)", model_robustness), "")
  ),
  evidence = tex_text(evidence)
)]
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
