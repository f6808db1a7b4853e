# Total energy of each operation, stacked active / passive (paper Figure 2c,d).
source("scripts/theme.R")
log <- file(snakemake@log[[1]], open = "wt")
sink(log, type = "message")

summary <- read_summary(snakemake@input[["summary"]])
dt <- first_setting(summary[file_type == snakemake@wildcards[["ftype"]] & n > 0])
dt[, codec := order_codecs(dt)]
dt[, op_class := op_class(op)]
unit <- energy_unit(dt$mean_energy_j)
parts <- melt(
  dt[, .(codec, op_class, active = pmax(mean_energy_active_j, 0) * unit$scale,
         passive = mean_energy_passive_j * unit$scale)],
  id.vars = c("codec", "op_class"), variable.name = "part"
)
totals <- dt[, .(codec, op_class, mean = mean_energy_j * unit$scale,
                 hw = fifelse(is.na(hw_energy_j), 0, hw_energy_j) * unit$scale)]
plot <- stacked_bars(parts, totals, sprintf("energy (%s)", unit$label), part_colours) +
  labs(
    title = sprintf("%s file: energy of compress-write / decompress-read vs plain", dt$file_type[1]),
    subtitle = estimated_subtitle(dt)
  )
save_pdf(plot, snakemake@output[[1]])
