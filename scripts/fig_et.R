# Energy-delay product of each operation, active / passive shares (paper Figure 2e,f).
source("scripts/theme.R")
open_log()

dt <- file_type_summary()
plot <- active_passive_plot(
  dt, "mean_et_js", "hw_et_js", "energy-delay (%s s)",
  sprintf("%s file: energy-delay product (ET)", dt$file_type[1])
)
save_pdf(plot, snakemake@output[[1]])
