# HPC '14 beside the originals: compression in the filesystem (Tables I and II:
# ratio on disk, CPU utilisation, runtime against compression off) and write
# phases between compute phases (Tables III and IV: time, power, energy).
# Every cell and note, the originals' values too, is set by rule hpc14_cells
# (wattzip.report.hpc14_cells); this script orders the codecs and lays the cells out.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

cells <- c("ratio", "cpu_percent", "runtime_vs_off", "time_s", "power_w", "energy_j", "energy_vs_off")
fs <- read_summary(snakemake@input[["filesystem"]], cells)
duty <- read_summary(snakemake@input[["duty"]], cells)
notes <- read_table(snakemake@input[["notes"]], "text")
note_of <- function(which) notes[part == which, text]
lines <- character()
add_table <- function(dt, align, header, caption, note = NULL) {
  path <- tempfile(fileext = ".tex")
  write_tabular(dt, path, align, header, note)
  lines <<- c(lines, "\\begin{table}[H]\\centering\\small", sprintf("\\caption{%s}", caption),
              readLines(path), "\\end{table}")
}

# Tables I/II: each codec's compress-write against the plain write on the same medium.
if (nrow(fs) > 0) {
  fs[, codec := order_codecs(fs)]
  setorder(fs, file_type, codec)
  add_table(
    fs[, .(file_type, as.character(codec), ratio, cpu_percent, runtime_vs_off, energy_j)],
    "llrrrr", c("File", "Codec", "Ratio", "CPU \\%", "Runtime / off", "Energy (J)"),
    "Write of each file with compression in user space or in btrfs, against compression off (plain) on the same medium (HPC '14 Tables I and II).",
    note_of("filesystem")
  )
}

# Tables III/IV: the duty-cycle runs (write phases between compute phases).
if (nrow(duty) > 0) {
  duty[, codec := order_codecs(duty)]
  add_table(
    duty[order(codec), .(as.character(codec), ratio, time_s, power_w, energy_j, energy_vs_off)],
    "lrrrrr", c("Codec", "Ratio", "Time (s)", "Power (W)", "Energy (J)", "Energy / off"),
    "Write phases between compute phases, each run one whole workload (HPC '14 Tables III and IV).",
    note_of("duty")
  )
}
if (!length(lines)) lines <- "% no filesystem codecs and no duty cycle in this study"
write_tex_lines(lines, snakemake@output[[1]])
