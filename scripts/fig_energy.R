# Total energy of each operation, stacked active / passive (paper Figure 2c,d).
source("scripts/theme.R")
open_log()

dt <- file_type_summary()
plot <- active_passive_plot(
  dt, "mean_energy_j", "hw_energy_j", "energy (%s)",
  sprintf("%s file: energy of compress-write / decompress-read vs plain", dt$file_type[1])
)
save_pdf(plot, snakemake@output[[1]])
