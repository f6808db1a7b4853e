# wattzip-figure: per=file_type
# Elapsed time of each operation, stacked user / system / wait (paper Figure 2a,b).
# A run that used several CPUs at once (pigz, zstd -T, copies > 1) has more CPU
# time than elapsed time, so its wait is undefined: it is drawn as one elapsed
# bar labelled with its CPU utilisation, (user + sys) / elapsed.
source("scripts/theme.R")
open_log()

dt <- file_type_summary()
dt[, cpu_s := mean_user_s + mean_sys_s]
dt[, parallel := cpu_s > mean_elapsed_s]
serial <- dt[parallel == FALSE]
parts <- rbind(
  melt(
    serial[, .(codec, op_class, user = mean_user_s, system = mean_sys_s,
               wait = mean_elapsed_s - cpu_s)],
    id.vars = c("codec", "op_class"), variable.name = "part"
  ),
  dt[parallel == TRUE, .(codec, op_class, part = "elapsed (parallel)", value = mean_elapsed_s)]
)
totals <- dt[, .(codec, op_class, mean = mean_elapsed_s,
                 hw = fifelse(is.na(hw_elapsed_s), 0, hw_elapsed_s))]
plot <- stacked_bars(parts, totals, "elapsed time (s)", part_colours) +
  labs(title = sprintf("%s file: time of compress-write / decompress-read vs plain", dt$file_type[1]))
if (any(dt$parallel)) {
  plot <- plot + geom_text(
    data = dt[parallel == TRUE], inherit.aes = FALSE, size = 2.3, vjust = -0.4,
    aes(x = codec, y = mean_elapsed_s + fifelse(is.na(hw_elapsed_s), 0, hw_elapsed_s),
        label = sprintf("CPU %.1fx", cpu_s / mean_elapsed_s))
  )
}
save_pdf(plot, snakemake@output[[1]])
