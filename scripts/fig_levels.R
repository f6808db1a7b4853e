# Energy and time of compress-write against the compression level (SYSTOR '11 Figure 3),
# one column per tool and storage medium (its level sweep per medium).
source("scripts/theme.R")
open_log()

summary <- read_summary(snakemake@input[["summary"]])[op == "compress-write" & n > 0]
# One setting per medium: the one that differs from the primary setting in its medium
# alone, so that no other factor mixes into the sweep.
summary <- along_factor(summary, "medium")
summary[, level_num := suppressWarnings(as.numeric(level))]
swept <- summary[!is.na(level_num), .(levels = uniqueN(level_num)), by = tool][levels >= 3, tool]
dt <- summary[tool %in% swept]
unit <- energy_unit(dt$mean_energy_j)
long <- rbind(
  dt[, .(file_type, tool, medium, level_num, metric = sprintf("energy (%s)", unit$label),
         mean = mean_energy_j * unit$scale, hw = hw_energy_j * unit$scale, meter_method)],
  dt[, .(file_type, tool, medium, level_num, metric = "elapsed time (s)",
         mean = mean_elapsed_s, hw = hw_elapsed_s, meter_method)]
)
long[is.na(hw), hw := 0]
plot <- ggplot(long, aes(x = level_num, y = mean, colour = file_type)) +
  geom_line(linewidth = 0.5) +
  geom_pointrange(aes(ymin = mean - hw, ymax = mean + hw), size = 0.15) +
  facet_grid(metric ~ tool + medium, scales = "free_y", switch = "y") +
  scale_x_continuous(breaks = sort(unique(long$level_num))) +
  scale_colour_manual(values = group_colours(long$file_type), name = NULL) +
  labs(x = "compression level", y = NULL, title = "Compress-write across levels",
       subtitle = estimated_subtitle(long)) +
  theme_wattzip() +
  theme(axis.text.x = element_text(angle = 0, hjust = 0.5), strip.placement = "outside")
save_pdf(plot, snakemake@output[[1]], height = 4)
