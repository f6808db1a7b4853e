# Compression ratio per codec and file type (paper Table 3 as a picture).
source("scripts/theme.R")
open_log()

summary <- read_summary(snakemake@input[["summary"]])
dt <- primary_rows(summary[op == "compress-write" & n > 0])
dt[, codec := order_codecs(dt)]
plot <- ggplot(dt, aes(x = codec, y = compression_ratio, fill = tool)) +
  geom_col(width = 0.75) +
  geom_hline(yintercept = 1, linewidth = 0.3, linetype = "dashed") +
  facet_wrap(~file_type, scales = "free_y") +
  scale_y_log10() +
  scale_tool(dt$tool, "fill") +
  labs(x = "alg-level", y = "compression ratio (original / compressed, log scale)",
       title = "Compression ratio by file type") +
  theme_wattzip()
save_pdf(plot, snakemake@output[[1]], height = 4.5)
