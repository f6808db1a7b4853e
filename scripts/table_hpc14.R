# HPC '14 beside the originals: compression in the filesystem (Tables I and II:
# ratio on disk, CPU utilisation, runtime against compression off) and write
# phases between compute phases (Tables III and IV: time, power, energy).
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

# The ratio cells are the analysis's (compression_ratio_tex), set by the one formatter
# of every ratio cell, so this table and the ratio table print one ratio alike.
summary <- primary_rows(read_summary(snakemake@input[["summary"]], "compression_ratio_tex")[n > 0])
patterns <- read_reference(snakemake@input[["table2"]])
write_only <- read_reference(snakemake@input[["table3"]])
lines <- character()
add_table <- function(dt, align, header, caption, note = NULL) {
  path <- tempfile(fileext = ".tex")
  write_tabular(dt, path, align, header, note)
  lines <<- c(lines, "\\begin{table}[H]\\centering\\small", sprintf("\\caption{%s}", caption),
              readLines(path), "\\end{table}")
}

# Tables I/II: each codec's compress-write against the plain write on the same medium.
writes <- summary[op %in% c("compress-write", "plain-write")]
off <- writes[codec == "plain", .(file_type, off_s = mean_elapsed_s)]
shown <- c("plain", unique(summary[tool == "btrfs", codec]), snakemake@params[["duty_codecs"]])
fs <- merge(writes[codec %in% shown], off, by = "file_type")
if (nrow(fs) > 0) {
  fs[, codec := order_codecs(fs)]
  setorder(fs, file_type, codec)
  add_table(
    fs[, .(file_type, as.character(codec), compression_ratio_tex,
           sprintf("%.0f", 100 * mean_cpu_utilization), sprintf("%.2f", mean_elapsed_s / off_s),
           sprintf("%.1f", mean_energy_j))],
    "llrrrr", c("File", "Codec", "Ratio", "CPU \\%", "Runtime / off", "Energy (J)"),
    "Write of each file with compression in user space or in btrfs, against compression off (plain) on the same medium (HPC '14 Tables I and II).",
    paste("Ratio on disk for btrfs (compsize). CPU \\% is (user + sys) / elapsed of the writing commands;",
          "the paper's is the server's.",
          sprintf("Originals (%s):", unique(patterns$setup)),
          paste(patterns[, sprintf("%s %s %.2f / %.1f\\%% / %.2f",
                pattern, algorithm, ratio, cpu_util_pct, runtime_ratio)], collapse = "; "),
          estimated_note(any(fs$meter_method == "estimated")))
  )
}

# Tables III/IV: the duty-cycle runs (write phases between compute phases).
duty <- summary[op == "write-compute"]
if (nrow(duty) > 0) {
  duty[, codec := order_codecs(duty)]
  base <- duty[codec == "plain", mean_energy_j]
  add_table(
    duty[order(codec), .(as.character(codec), compression_ratio_tex,
                         sprintf("%.2f", mean_elapsed_s),
                         sprintf("%.1f", mean_energy_j / mean_elapsed_s),
                         sprintf("%.1f", mean_energy_j),
                         if (length(base)) sprintf("%.2f", mean_energy_j / base) else "--")],
    "lrrrrr", c("Codec", "Ratio", "Time (s)", "Power (W)", "Energy (J)", "Energy / off"),
    "Write phases between compute phases, each run one whole workload (HPC '14 Tables III and IV).",
    paste(sprintf("Originals (%s): write only", unique(write_only$setup)),
          paste(write_only[, sprintf("%s %.0f s, %.0f W, %.1f Wh",
                algorithm, time_s, power_w, energy_wh)], collapse = "; "),
          "; with computation",
          paste(read_reference(snakemake@input[["table4"]])[idle3_timer == "disabled",
                sprintf("%s %.0f s, %.0f W, %.1f Wh", algorithm, time_s, power_w, energy_wh)],
                collapse = "; "), ".",
          estimated_note(any(duty$meter_method == "estimated")))
  )
}
if (!length(lines)) lines <- "% no filesystem codecs and no duty cycle in this study"
write_tex_lines(lines, snakemake@output[[1]])
