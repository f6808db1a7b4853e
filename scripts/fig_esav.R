# Energy saving E_sav(n) against the read-to-write ratio n (paper Figure 3).
source("scripts/theme.R")
open_log()

esav <- primary_rows(read_table(snakemake@input[["esav"]]))
summary <- read_summary(snakemake@input[["summary"]])
be <- read_table(snakemake@input[["breakeven"]])[
  metric == "E" & kind == "at_least" & value <= max(esav$n) & primary == TRUE
]
tools <- unique(summary[codec != "plain", .(codec, tool, level)])
esav <- merge(esav, tools, by = "codec")
esav[, codec := order_codecs(esav)]
# A band is unbounded where an operation has a single run: drawn to the panel's edge.
unit <- energy_unit(abs(Filter(is.finite, c(esav$lo_j, esav$hi_j, esav$esav_j))))
esav[, meter_method := fifelse(estimated, "estimated", "measured")]
labels <- merge(be[, .(file_type, codec, value, display)], tools, by = "codec")

plot <- ggplot(esav, aes(x = n, y = esav_j * unit$scale, colour = tool, group = codec)) +
  geom_hline(yintercept = 0, linewidth = 0.4) +
  geom_ribbon(aes(ymin = lo_j * unit$scale, ymax = hi_j * unit$scale, fill = tool),
              alpha = 0.12, colour = NA) +
  geom_line(aes(linetype = codec), linewidth = 0.5) +
  geom_point(data = labels, aes(x = value, y = 0, colour = tool), inherit.aes = FALSE,
             shape = 21, fill = "white", size = 1.8) +
  geom_text(data = labels, aes(x = value, y = 0, label = paste0(codec, ": ", display), colour = tool),
            inherit.aes = FALSE, vjust = -0.8, size = 2.4, check_overlap = TRUE, show.legend = FALSE) +
  facet_wrap(~file_type, scales = "free_y") +
  scale_tool(esav$tool) +
  scale_tool(esav$tool, "fill", guide = "none") +
  scale_linetype_manual(values = codec_linetypes(esav$codec), name = NULL) +
  labs(
    x = "read-to-write ratio n (reads per write)",
    y = sprintf("energy saving E_sav (%s)", unit$label),
    title = "Energy saved (> 0) or lost (< 0) against plain I/O",
    subtitle = estimated_subtitle(esav)
  ) +
  theme_wattzip() +
  theme(axis.text.x = element_text(angle = 0, hjust = 0.5), legend.box = "vertical")
save_pdf(plot, snakemake@output[[1]], height = 6)
