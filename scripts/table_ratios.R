# Compression ratios reproduced beside SYSTOR '09 Table 3 (and SYSTOR '11 Table 1 where levels ran).
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

summary <- primary_rows(read_summary(snakemake@input[["summary"]], "compression_ratio_tex")[op == "compress-write" & n > 0])
ref <- rbind(
  read_reference(snakemake@input[["table3"]])[, .(codec, file_type, paper = display_tex)],
  read_reference(snakemake@input[["table1"]])[, .(codec, file_type, paper = display_tex)]
)
ref <- unique(ref, by = c("codec", "file_type"))
# Each cell's LaTeX comes set by the analysis (wattzip.analysis.breakeven.format_ratio, the
# magnitudes of the papers): this script only places it.
dt <- merge(summary[, .(codec, tool, level, file_type, cell = compression_ratio_tex)], ref,
            by = c("codec", "file_type"), all.x = TRUE)
wide <- wide_by_file_type(dt)
write_tabular(
  wide, snakemake@output[[1]], paste0("l", strrep("r", ncol(wide) - 1)),
  header = c("Tool", names(wide)[-1]),
  note = "This testbed's ratio, the original paper's in parentheses (SYSTOR '09 Table 3; SYSTOR '11 Table 1 for other levels)."
)
