# Energy against compression ratio: the trade-off of the paper's summary (5.7).
source("scripts/theme.R")
open_log()

summary <- primary_rows(read_summary(snakemake@input[["summary"]])[n > 0])
plain <- summary[codec == "plain", .(plain_j = sum(mean_energy_j)), by = file_type]
pairs <- summary[codec != "plain", .(
  energy_j = sum(mean_energy_j),
  compression_ratio = max(compression_ratio, na.rm = TRUE),
  tool = tool[1], meter_method = meter_method[1]
), by = .(file_type, codec)]
pairs <- merge(pairs, plain, by = "file_type")
pairs[, relative := energy_j / plain_j]
plot <- ggplot(pairs, aes(x = compression_ratio, y = relative, colour = tool, shape = tool)) +
  geom_hline(yintercept = 1, linewidth = 0.3, linetype = "dashed") +
  geom_point(size = 1.8) +
  geom_text(aes(label = codec), size = 2.3, vjust = -0.7, check_overlap = TRUE, show.legend = FALSE) +
  facet_wrap(~file_type, scales = "free") +
  scale_x_log10() +
  scale_tool(pairs$tool) +
  scale_tool_shape(pairs$tool) +
  labs(
    x = "compression ratio (log scale)",
    y = "energy of one write + one read,\nrelative to plain (1 = same)",
    title = "Energy against compression ratio",
    subtitle = estimated_subtitle(pairs)
  ) +
  theme_wattzip() +
  theme(axis.text.x = element_text(angle = 0, hjust = 0.5))
save_pdf(plot, snakemake@output[[1]], height = 4.5)
