# Power and block-I/O rates during chosen runs (SYSTOR '11 Figures 4-7), from the traces:
# the target's and the input's devices, each its own line.
source("scripts/theme.R")
open_log()

runs <- read_table(snakemake@input[["runs"]])
setnames(runs, "repeat", "repeat_") # `repeat` is a reserved word in R
chosen <- runs[verified == TRUE & file_type == snakemake@params[["file_type"]] &
                 codec %in% snakemake@params[["codecs"]] & op == "compress-write" & repeat_ == 1]
read_trace <- function(path) {
  t <- as.data.table(read.csv(gzfile(path)))
  if (!"device" %in% names(t)) t[, device := "target"] # traces of one device only
  t[, device := as.character(device)]
}
traces <- rbindlist(lapply(seq_len(nrow(chosen)), function(i) {
  t <- read_trace(chosen$trace[i])
  t[, run := sprintf("%s %s", chosen$codec[i], chosen$op[i])]
  t
}))
traces[series != "power_w", value := value / 2^20]
traces[series == "power_w" | is.na(device) | device == "", device := "meter"]
traces[, series := factor(series,
  levels = c("power_w", "read_bytes_per_s", "write_bytes_per_s"),
  labels = c("power (W)", "read (MiB/s)", "write (MiB/s)")
)]
plot <- ggplot(traces, aes(x = t_s, y = value, colour = device)) +
  geom_line(linewidth = 0.4) +
  geom_point(size = 0.4) + # a run shorter than two sampling periods still shows its sample
  facet_grid(series ~ run, scales = "free", switch = "y") +
  scale_colour_manual(values = okabe_ito[c(4, 1, 3, 2, 5)], name = "device") +
  labs(
    x = "time since the run started (s)", y = NULL,
    title = sprintf("%s file: power and block I/O during compress-write", snakemake@params[["file_type"]]),
    subtitle = estimated_subtitle(chosen)
  ) +
  theme_wattzip() +
  theme(axis.text.x = element_text(angle = 0, hjust = 0.5), strip.placement = "outside")
save_pdf(plot, snakemake@output[[1]], height = 4.2)
