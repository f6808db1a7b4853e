# Elapsed time of each operation, stacked user / system / wait (paper Figure 2a,b).
source("scripts/theme.R")
open_log()

dt <- file_type_summary()
parts <- melt(
  dt[, .(codec, op_class, user = mean_user_s, system = mean_sys_s, wait = pmax(mean_wait_s, 0))],
  id.vars = c("codec", "op_class"), variable.name = "part"
)
totals <- dt[, .(codec, op_class, mean = mean_elapsed_s,
                 hw = fifelse(is.na(hw_elapsed_s), 0, hw_elapsed_s))]
plot <- stacked_bars(parts, totals, "elapsed time (s)", part_colours) +
  labs(title = sprintf("%s file: time of compress-write / decompress-read vs plain", dt$file_type[1]))
save_pdf(plot, snakemake@output[[1]])
