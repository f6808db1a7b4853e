# Break-even read-to-write ratio against the disk's bandwidth (emulated by a
# block-I/O throttle): the paper's laptop, desktop and server disks on one machine.
# Hollow points are undecided at 95%; "never" is drawn at the top, "always" at 0.
source("scripts/theme.R")
open_log()

be <- fread(snakemake@input[["breakeven"]], encoding = "UTF-8")[metric %in% c("E", "T")]
be <- along_factor(be, "bandwidth")
be[, mbps := bandwidth_bytes_per_s / 1e6]
top <- max(c(be[kind == "at_least", value], 1), na.rm = TRUE) * 2
be[, plotted := fcase(kind == "always", 0, kind == "never", top, kind == "at_least", value,
                      default = NA_real_)]
fastest <- if (any(is.finite(be$mbps))) max(be$mbps, na.rm = TRUE) else 1
be[is.na(mbps), mbps := fastest * 4] # unlimited: drawn to the right
plot <- ggplot(be[!is.na(plotted)], aes(x = mbps, y = plotted, colour = codec, group = codec)) +
  geom_line(linewidth = 0.4) +
  geom_point(aes(shape = decided), size = 1.6, fill = "white") +
  scale_shape_manual(values = c(`TRUE` = 16, `FALSE` = 21), name = "decided at 95%") +
  scale_x_log10() +
  facet_grid(metric ~ file_type, scales = "free_y") +
  scale_colour_manual(values = rep(okabe_ito, 3), name = NULL) +
  labs(x = "disk bandwidth (throttle, MB/s; rightmost: unlimited)",
       y = "break-even reads per write (top: never)",
       title = "Break-even against the disk's speed (emulated disks)",
       subtitle = estimated_subtitle(be[, .(meter_method = fifelse(estimated, "estimated", ""))])) +
  theme_wattzip() +
  theme(axis.text.x = element_text(angle = 0, hjust = 0.5))
save_pdf(plot, snakemake@output[[1]], height = 4.5)
