# Compression ratios reproduced beside SYSTOR '09 Table 3 (and SYSTOR '11 Table 1 where levels ran).
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

summary <- primary_rows(read_summary(snakemake@input[["summary"]])[op == "compress-write" & n > 0])
ref <- rbind(
  read_reference(snakemake@input[["table3"]])[, .(codec, file_type, paper = display_tex)],
  read_reference(snakemake@input[["table1"]])[, .(codec, file_type, paper = display_tex)]
)
ref <- unique(ref, by = c("codec", "file_type"))
dt <- merge(summary[, .(codec, tool, level, file_type, compression_ratio)], ref,
            by = c("codec", "file_type"), all.x = TRUE)
fmt <- function(x) ifelse(x >= 100, sprintf("$\\sim\\!10^{%d}$", round(log10(x))), sprintf("%.2f", x))
dt[, cell := fmt(compression_ratio)]
wide <- wide_by_file_type(dt)
write_tabular(
  wide, snakemake@output[[1]], paste0("l", strrep("r", ncol(wide) - 1)),
  header = c("Tool", names(wide)[-1]),
  note = "This testbed's ratio, the original paper's in parentheses (SYSTOR '09 Table 3; SYSTOR '11 Table 1 for other levels)."
)
