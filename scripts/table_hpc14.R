# HPC '14 beside the originals: compression in the filesystem (Tables I and II:
# ratio on disk, CPU utilisation, runtime against compression off) and write
# phases between compute phases (Tables III and IV: time, power, energy).
# Every cell, caption and note, the originals' values too, is set by rule hpc14_cells
# (wattzip.report.hpc14_cells); this script orders the codecs and lays the cells out.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

cells <- c("ratio", "cpu_percent", "runtime_vs_off", "time_s", "power_w", "energy_j", "energy_vs_off")
fs <- read_summary(snakemake@input[["filesystem"]], cells)
duty <- read_summary(snakemake@input[["duty"]], cells)
notes <- read_table(snakemake@input[["notes"]], c("caption", "text"))
lines <- character()
add_table <- function(dt, align, header, which) {
  lines <<- c(
    lines, "\\begin{table}[H]\\centering\\small",
    sprintf("\\caption{%s}", notes[part == which, caption]),
    tabular_lines(dt, align, header, notes[part == which, text]), "\\end{table}"
  )
}

# Tables I/II: each codec's compress-write against the plain write on the same medium.
if (nrow(fs) > 0) {
  fs[, codec := order_codecs(fs)]
  setorder(fs, file_type, codec)
  add_table(
    fs[, .(file_type, as.character(codec), ratio, cpu_percent, runtime_vs_off, energy_j)],
    "llrrrr", c("File", "Codec", "Ratio", "CPU \\%", "Runtime / off", "Energy (J)"),
    "filesystem"
  )
}

# Tables III/IV: the duty-cycle runs (write phases between compute phases).
if (nrow(duty) > 0) {
  duty[, codec := order_codecs(duty)]
  add_table(
    duty[order(codec), .(as.character(codec), ratio, time_s, power_w, energy_j, energy_vs_off)],
    "lrrrrr", c("Codec", "Ratio", "Time (s)", "Power (W)", "Energy (J)", "Energy / off"),
    "duty"
  )
}
if (!length(lines)) lines <- "% no filesystem codecs and no duty cycle in this study"
write_tex_lines(lines, snakemake@output[[1]])
