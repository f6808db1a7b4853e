# Energy and time of each codec's operations against the threads of the multi-threaded
# codecs (config threads: [1, 2, ...]), with the passive energy of the cores each run
# left idle (wattzip.analysis.threads). A single-threaded codec is measured once, at the
# first thread count: it is drawn as a dashed line across the thread counts, the cost the
# multi-threaded ones are set against on the same machine.
source("scripts/theme.R")
open_log()

dt <- read_table(snakemake@input[["threads"]])[n > 0 & codec != "plain" & !op %in% codec_only_ops]
# The settings that differ from the primary one in their thread count alone.
dt <- along_factor(dt, "threads")
dt[, codec := order_codecs(dt)]
unit <- energy_unit(dt$mean_energy_j)
long <- rbind(
  dt[, .(file_type, codec, op, threads, metric = "elapsed time (s)",
         mean = mean_elapsed_s, hw = hw_elapsed_s, meter_method)],
  dt[, .(file_type, codec, op, threads, metric = sprintf("energy (%s)", unit$label),
         mean = mean_energy_j * unit$scale, hw = hw_energy_j * unit$scale, meter_method)],
  dt[, .(file_type, codec, op, threads, metric = sprintf("idle cores' passive (%s)", unit$label),
         mean = mean_idle_cores_j * unit$scale, hw = hw_idle_cores_j * unit$scale,
         meter_method)]
)
long[is.na(hw), hw := 0]
long[, swept := uniqueN(threads) > 1, by = .(file_type, codec)]
long[, panel := sprintf("%s, %s", file_type, op)]
plot <- ggplot(long[swept == TRUE], aes(x = threads, y = mean, colour = codec)) +
  geom_line(linewidth = 0.5) +
  geom_pointrange(aes(ymin = mean - hw, ymax = mean + hw), size = 0.15) +
  geom_hline(data = long[swept == FALSE], aes(yintercept = mean, colour = codec),
             linetype = "dashed", linewidth = 0.4) +
  facet_grid(metric ~ panel, scales = "free_y", switch = "y") +
  scale_x_continuous(breaks = sort(unique(long$threads))) +
  scale_colour_manual(values = group_colours(as.character(long$codec)), name = NULL) +
  labs(x = "threads of the multi-threaded codecs", y = NULL,
       title = "Time and energy against threads (dashed: single-threaded, measured once)",
       subtitle = estimated_subtitle(long)) +
  theme_wattzip() +
  theme(axis.text.x = element_text(angle = 0, hjust = 0.5), strip.placement = "outside")
save_pdf(plot, snakemake@output[[1]], height = 5)
