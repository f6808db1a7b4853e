# Energy-delay product of each operation, active / passive shares (paper Figure 2e,f).
source("scripts/theme.R")
log <- file(snakemake@log[[1]], open = "wt")
sink(log, type = "message")

summary <- read_summary(snakemake@input[["summary"]])
dt <- first_setting(summary[file_type == snakemake@wildcards[["ftype"]] & n > 0])
dt[, codec := order_codecs(dt)]
dt[, op_class := op_class(op)]
# ET splits like E: its active share is E_active / E of the same runs.
dt[, active_share := pmin(pmax(mean_energy_active_j / mean_energy_j, 0), 1)]
unit <- energy_unit(dt$mean_et_js)
parts <- melt(
  dt[, .(codec, op_class, active = mean_et_js * active_share * unit$scale,
         passive = mean_et_js * (1 - active_share) * unit$scale)],
  id.vars = c("codec", "op_class"), variable.name = "part"
)
totals <- dt[, .(codec, op_class, mean = mean_et_js * unit$scale,
                 hw = fifelse(is.na(hw_et_js), 0, hw_et_js) * unit$scale)]
plot <- stacked_bars(parts, totals, sprintf("energy-delay (%s s)", unit$label), part_colours) +
  labs(
    title = sprintf("%s file: energy-delay product (ET)", dt$file_type[1]),
    subtitle = estimated_subtitle(dt)
  )
save_pdf(plot, snakemake@output[[1]])
