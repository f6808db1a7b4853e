# Compression ratios reproduced beside SYSTOR '09 Table 3 (and SYSTOR '11 Table 1 where levels ran).
source("scripts/theme.R")
source("scripts/tex.R")
log <- file(snakemake@log[[1]], open = "wt")
sink(log, type = "message")

summary <- first_setting(read_summary(snakemake@input[["summary"]])[op == "compress-write" & n > 0])
ref <- rbind(
  read_reference(snakemake@input[["table3"]])[, .(codec, file_type, paper = display)],
  read_reference(snakemake@input[["table1"]])[, .(codec, file_type, paper = display)]
)
ref <- unique(ref, by = c("codec", "file_type"))
dt <- merge(summary[, .(codec, tool, level, file_type, compression_ratio)], ref,
            by = c("codec", "file_type"), all.x = TRUE)
fmt <- function(x) ifelse(x >= 100, sprintf("$\\sim\\!10^{%d}$", round(log10(x))), sprintf("%.2f", x))
dt[, cell := ifelse(is.na(paper), fmt(compression_ratio),
                    sprintf("%s {\\scriptsize(%s)}", fmt(compression_ratio), tex_display(paper)))]
dt[, codec := order_codecs(dt)]
types <- intersect(c("text", "binary", "random", "zero"), unique(dt$file_type))
types <- c(types, setdiff(sort(unique(dt$file_type)), types))
wide <- dcast(dt, codec ~ factor(file_type, levels = types), value.var = "cell", fill = "--")
setorder(wide, codec)
wide[, codec := as.character(codec)]
write_tabular(
  wide, snakemake@output[[1]], paste0("l", strrep("r", length(types))),
  header = c("Tool", types),
  note = "This testbed's ratio, the original paper's in parentheses (SYSTOR '09 Table 3; SYSTOR '11 Table 1 for other levels)."
)
