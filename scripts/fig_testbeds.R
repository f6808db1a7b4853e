# Several testbeds side by side: compress-write and decompress-read energy relative to plain.
source("scripts/theme.R")
open_log()

summary <- rbindlist(lapply(snakemake@input[["summaries"]], read_summary), fill = TRUE)
summary <- summary[n > 0 & primary == TRUE]
plain <- summary[codec == "plain", .(testbed, file_type, op_class = op_class(op), plain_j = mean_energy_j)]
dt <- summary[codec != "plain"]
dt[, op_class := op_class(op)]
dt <- merge(dt, plain, by = c("testbed", "file_type", "op_class"))
dt[, relative := mean_energy_j / plain_j]
dt[, codec := order_codecs(dt)]
# Each testbed says whether its own energy is estimated: the subtitle alone cannot.
estimated_testbeds <- dt[meter_method == "estimated", unique(testbed)]
dt[testbed %in% estimated_testbeds, testbed := paste(testbed, "(ESTIMATED)")]
plot <- ggplot(dt, aes(x = codec, y = relative, fill = testbed)) +
  geom_col(position = position_dodge(width = 0.8), width = 0.75) +
  geom_hline(yintercept = 1, linewidth = 0.3, linetype = "dashed") +
  facet_grid(op_class ~ file_type, scales = "free") +
  scale_y_log10() +
  scale_fill_manual(values = group_colours(dt$testbed), name = NULL) +
  labs(x = "alg-level", y = "energy relative to plain (log scale)",
       title = "Testbeds compared", subtitle = estimated_subtitle(dt)) +
  theme_wattzip()
save_pdf(plot, snakemake@output[[1]], height = 5)
