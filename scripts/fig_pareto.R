# wattzip-figure: metric=energy,time
# Which codec to choose: energy (or time) per GB of input for one write and n reads,
# against the compression ratio; the Pareto front (no codec both cheaper and
# compressing more) is drawn and its codecs named, per file type and n.
source("scripts/theme.R")
open_log()

metric <- snakemake@wildcards[["metric"]]
column <- c(energy = "energy_j_per_gb", time = "seconds_per_gb")[[metric]]
dt <- primary_rows(read_table(snakemake@input[["pareto"]]))[metric == column]
dt[, reads := factor(sprintf("%d read%s per write", reads, fifelse(reads == 1, "", "s")),
                     levels = unique(sprintf("%d read%s per write", sort(unique(reads)),
                                             fifelse(sort(unique(reads)) == 1, "", "s"))))]
dt[, meter_method := fifelse(estimated, "estimated", "measured")]
ylab <- c(energy = "energy per GB of input (J)", time = "time per GB of input (s)")[[metric]]
front <- dt[on_front == TRUE][order(compression_ratio)]
plot <- ggplot(dt, aes(x = compression_ratio, y = cost)) +
  geom_step(data = front, aes(group = interaction(file_type, reads)), direction = "vh",
            colour = okabe_ito[4], linewidth = 0.4) +
  geom_point(aes(colour = on_front), size = 1.4) +
  geom_text(data = front, aes(label = codec), size = 2.2, vjust = -0.7, check_overlap = TRUE) +
  facet_grid(reads ~ file_type, scales = "free") +
  scale_x_log10() +
  scale_colour_manual(values = c(`TRUE` = okabe_ito[4], `FALSE` = "grey55"),
                      labels = c(`TRUE` = "on the Pareto front", `FALSE` = "dominated"),
                      name = NULL) +
  labs(x = "compression ratio (log)", y = ylab,
       title = sprintf("Choosing a codec: %s against compression ratio", metric),
       subtitle = if (metric == "energy") estimated_subtitle(dt) else NULL) +
  theme_wattzip() +
  theme(axis.text.x = element_text(angle = 0, hjust = 0.5))
save_pdf(plot, snakemake@output[[1]], height = 5.5)
