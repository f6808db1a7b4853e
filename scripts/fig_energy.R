# wattzip-figure: per=file_type metric=energy,et name={metric}
# Energy or the energy-delay product (the figure's `metric` wildcard: energy, et) of each
# operation, stacked active / passive as the paper draws them (its Figure 2c-f). The
# active share of a total is E_active / E of the same runs.
source("scripts/theme.R")
open_log()

dt <- file_type_summary()
drawn <- list(
  energy = list(
    mean = "mean_energy_j", hw = "hw_energy_j", what = "energy (%s)",
    title = "%s file: energy of compress-write / decompress-read vs plain"
  ),
  et = list(
    mean = "mean_et_js", hw = "hw_et_js", what = "energy-delay (%s s)",
    title = "%s file: energy-delay product (ET)"
  )
)[[snakemake@wildcards[["metric"]]]]
dt[, total := get(drawn$mean)]
dt[, share := pmin(pmax(mean_energy_active_j / mean_energy_j, 0), 1)]
unit <- energy_unit(dt$total)
parts <- melt(
  dt[, .(codec, op_class, active = total * share * unit$scale,
         passive = total * (1 - share) * unit$scale)],
  id.vars = c("codec", "op_class"), variable.name = "part"
)
totals <- dt[, .(codec, op_class, mean = total * unit$scale,
                 hw = fifelse(is.na(get(drawn$hw)), 0, get(drawn$hw)) * unit$scale)]
plot <- stacked_bars(parts, totals, sprintf(drawn$what, unit$label), part_colours) +
  labs(title = sprintf(drawn$title, dt$file_type[1]), subtitle = estimated_subtitle(dt))
save_pdf(plot, snakemake@output[[1]])
