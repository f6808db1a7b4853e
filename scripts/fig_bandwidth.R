# Break-even read-to-write ratio of each codec against the disk's bandwidth (emulated:
# one budget for reads and writes, or a block-I/O cgroup; the report says which), in T and E: the SYSTOR '09 slides' break-even tables of the server,
# desktop and laptop (slide 37: tools down, machines across) with the disk alone changed.
# A framed cell is where compression starts to pay as the disk slows down.
source("scripts/theme.R")
open_log()

be <- read_table(snakemake@input[["breakeven"]])[metric %in% c("T", "E")]
# The level the cells were decided at, as the analysis states it (wattzip.analysis.analysis_options).
decided_at <- be$joint_confidence_text[1]
be <- along_factor(be, "bandwidth")
tools <- unique(read_summary(snakemake@input[["summary"]])[codec != "plain", .(codec, tool, level)])
be <- merge(be, tools, by = "codec")
be[, codec := order_codecs(be)]

# Disks from the fastest (uncapped) to the slowest, so that the disk slows left to right.
disks <- unique(be[, .(bandwidth_bytes_per_s)])
disks[, disk := factor_label(disks, "bandwidth")]
setorder(disks, -bandwidth_bytes_per_s, na.last = FALSE)
be[, disk := factor(factor_label(be, "bandwidth"), levels = disks$disk)]
be[, rank := as.integer(disk)]

# A cell the intervals cannot decide is drawn as undecided, whatever its point estimate.
kinds <- c(
  always = "∀ always: saves on the write and on every read",
  at_least = "n: pays from n reads per write on",
  at_most = "≤ n: pays up to n reads per write",
  never = "× never pays",
  undecided = sprintf("undecided at %s (the point estimate, with ?)", decided_at)
)
kind_colours <- setNames(c("#009E73", "#56B4E9", "#F0E442", "#D55E00", "grey88"), kinds)
be[, shown := factor(kinds[fifelse(decided, kind, "undecided")], levels = kinds)]

# Compression starts to pay at the fastest disk from which on, down to the slowest, the
# cell is decided "always": one decided cell among undecided or costly slower ones is not
# a trend, and a gap in the disks breaks the run.
be[, pays := decided & kind == "always"]
setorder(be, metric, file_type, codec, -rank)
be[, run := cumprod(pays & rank == nlevels(disk) - seq_len(.N) + 1),
   by = .(metric, file_type, codec)]
marks <- be[run == 1, .SD[which.min(rank)], by = .(metric, file_type, codec)]
for (line in marks[, sprintf("compression starts to pay: %s %s %s from %s", metric,
                             file_type, codec, disk)]) {
  message(line)
}

estimated_e <- any(be[metric == "E", estimated])
measured <- if (is_simulated()) "SIMULATED" else "measured"
panels <- c(T = sprintf("T: time (%s)", measured),
            E = if (estimated_e) "E: energy, ESTIMATED" else sprintf("E: energy (%s)", measured))
be[, panel := factor(panels[metric], levels = panels)]
marks[, panel := factor(panels[metric], levels = panels)]

plot <- ggplot(be, aes(x = disk, y = codec)) +
  geom_tile(aes(fill = shown), colour = "white", linewidth = 0.4) +
  geom_tile(data = marks, aes(colour = "compression starts to pay"), fill = NA,
            linewidth = 0.9, width = 0.92, height = 0.86) +
  geom_text(aes(label = display), size = 2.3) +
  facet_grid(file_type ~ panel, scales = "free_y", space = "free_y") +
  scale_y_discrete(limits = rev) +
  scale_fill_manual(values = kind_colours, drop = FALSE, name = NULL) +
  scale_colour_manual(values = c(`compression starts to pay` = "black"), name = NULL) +
  guides(fill = guide_legend(ncol = 2, order = 1), colour = guide_legend(order = 2)) +
  labs(
    x = "emulated disk bandwidth (MB/s, slower to the right)",
    y = "alg-level",
    title = "Break-even reads per write against the disk's speed (emulated disks)",
    subtitle = estimated_subtitle(be[, .(meter_method = fifelse(estimated, "estimated", ""))]),
    caption = paste0(
      "Each cell: the break-even read-to-write ratio n_be, printed as the SYSTOR '09 ",
      "slides print it.\nFramed: compression starts to pay there, at the fastest disk ",
      "from which on, down to the slowest, the cell is\ndecided \"always\" at ", decided_at, " ",
      "(dw <= 0 and dr >= 0: it saves on the write and on every read, at any read/write ",
      "ratio).\nUndecided cells are never framed."
    )
  ) +
  theme_wattzip() +
  theme(
    axis.text.x = element_text(angle = 0, hjust = 0.5), legend.box = "vertical",
    plot.caption = element_text(hjust = 0, size = 7)
  )
rows <- nlevels(be$codec) * uniqueN(be$file_type)
save_pdf(plot, snakemake@output[[1]], height = 3 + 0.2 * rows)
