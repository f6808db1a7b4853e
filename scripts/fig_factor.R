# Energy of compress-write and decompress-read under each value of one factor
# (SYSTOR '11 Figures 8: governors, 9: I/O schedulers, 10: file types x media),
# the summary's half-widths (wattzip.stats.PAPER_CONFIDENCE) as error bars.
source("scripts/theme.R")
open_log()

factor_name <- snakemake@wildcards[["factor"]]
dt <- along_factor(read_summary(snakemake@input[["summary"]])[n > 0 & codec != "plain"],
                   factor_name)
dt[, value := factor_label(dt, factor_name)]
dt[, codec := order_codecs(dt)]
unit <- energy_unit(dt$mean_energy_j)
dt[, hw := fifelse(is.na(hw_energy_j), 0, hw_energy_j)]
plot <- ggplot(dt, aes(x = codec, y = mean_energy_j * unit$scale, fill = value)) +
  geom_col(position = position_dodge(width = 0.8), width = 0.75) +
  geom_errorbar(aes(ymin = pmax(mean_energy_j - hw, 0) * unit$scale,
                    ymax = (mean_energy_j + hw) * unit$scale),
                position = position_dodge(width = 0.8), width = 0.3, linewidth = 0.3) +
  facet_grid(op ~ file_type, scales = "free_y") +
  scale_fill_manual(values = group_colours(dt$value), name = factor_name) +
  labs(x = "alg-level", y = sprintf("energy (%s)", unit$label),
       title = sprintf("Energy under each %s", factor_name),
       subtitle = estimated_subtitle(dt)) +
  theme_wattzip()
save_pdf(plot, snakemake@output[[1]], height = 4.5)
