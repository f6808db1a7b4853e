# Shared look and helpers of every figure and table: one theme, one colour-blind-safe
# palette (Okabe-Ito, extended for any number of tools), the paper's codec order,
# and the "estimated" mark.

suppressPackageStartupMessages({
  library(data.table)
  library(ggplot2)
})

okabe_ito <- c(
  "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
  "#56B4E9", "#F0E442", "#000000", "#999999"
)
part_colours <- c(
  user = "#0072B2", system = "#E69F00", wait = "#BBBBBB",
  active = "#D55E00", passive = "#56B4E9", "elapsed (parallel)" = "#009E73"
)
# The tools in the paper's order, as the Python parts order them too
# (scripts/tool_order.csv is a link to wattzip/data/tool_order.csv).
tool_order <- fread("scripts/tool_order.csv", encoding = "UTF-8")$tool

# Legends name the algorithm as the paper does: PPMd, not the 7-Zip binary.
tool_family <- function(tool) ifelse(tool == "7zz", "ppmd", tool)

# Colours for any number of groups: Okabe-Ito's nine colour-blind-safe colours first,
# then as many hues as needed, evenly spaced in HCL ("Dark 3": one chroma and lightness).
# Past nine, colour alone no longer tells groups apart for every reader, so figures
# also map the tool to a shape (points) and the codec to a line type (lines).
group_colours <- function(groups) {
  groups <- unique(as.character(groups))
  extra <- grDevices::hcl.colors(max(length(groups) - length(okabe_ito), 0), "Dark 3")
  setNames(c(okabe_ito, extra)[seq_along(groups)], groups)
}

# Every tool keeps one colour and one shape in every figure of every study: its place
# in the paper's tool order (plain excepted), then tools the order lacks, by name.
tool_key <- function(tools) {
  known <- setdiff(tool_family(tool_order), "plain")
  unique(c(known, sort(setdiff(unique(as.character(tools)), known))))
}
point_shapes <- c(16, 17, 15, 18, 1, 2, 0, 5, 6, 3, 4, 8, 7, 9, 10, 12, 13, 14)
tool_colours <- function(tools) group_colours(tool_key(tools))
tool_shapes <- function(tools) {
  key <- tool_key(tools)
  setNames(rep(point_shapes, length.out = length(key)), key)
}
scale_tool <- function(tools, aesthetics = "colour", ...) {
  scale_discrete_manual(aesthetics, values = tool_colours(tools), name = NULL, ...)
}
scale_tool_shape <- function(tools) {
  scale_shape_manual(values = tool_shapes(tools), name = NULL)
}

# Codecs cycle through the line types in the paper's order (order_codecs), so the codecs
# of one tool (at most 13, each its own level) never share a line type.
codec_linetypes <- function(codecs) {
  codecs <- levels(droplevels(as.factor(codecs)))
  setNames(rep(scales::linetype_pal()(13), length.out = length(codecs)), codecs)
}

# `text`: columns of cells the analysis set (e.g. compression_ratio_tex), read as
# text so that "1.00" stays "1.00".
# A number above 2^31 (a bandwidth of 3 GB/s, a 2 GiB input) is read as a double: as
# integer64 without the bit64 package its arithmetic and is.na are wrong, silently.
options(datatable.integer64 = "double")

# Columns that stay text whatever their values hold: an identifier (a testbed named 01, a
# meter_id of ten decimal digits) would be read as a number in one file and as text in
# another, and a display (a study whose every cell is "at least n") as a number that drops
# the paper's notation; a column empty on every row as logical.
text_columns <- c(
  "testbed", "meter_id", "display", "display_tex", "cell_tex", "levels_tex",
  "joint_confidence_text", "model_robustness", "note"
)

read_table <- function(path, text = NULL) {
  present <- intersect(c(text_columns, text), names(fread(path, nrows = 0)))
  fread(path, encoding = "UTF-8", colClasses = list(character = present))
}

# The operations as the package declares them (scripts/operations.csv is a link to
# wattzip/data/operations.csv); the figures of a cell's writes and reads draw those whose
# region is the I/O (or the duty cycle), never the codec alone beside them (the report's
# tables set the codec-only operations beside them).
operation_table <- fread("scripts/operations.csv", encoding = "UTF-8")
codec_only_ops <- operation_table[region == "codec", op]

# The summary's rows of the operations the paper drew (a table without operations whole).
read_summary <- function(path, text = NULL) {
  dt <- read_table(path, text)
  if ("op" %in% names(dt)) dt <- dt[!op %in% codec_only_ops]
  dt[, tool := tool_family(tool)]
  dt
}

theme_wattzip <- function(base_size = 9) {
  theme_bw(base_size = base_size) +
    theme(
      legend.position = "bottom",
      panel.grid.minor = element_blank(),
      panel.grid.major.x = element_blank(),
      strip.background = element_rect(fill = "grey92", colour = NA),
      plot.subtitle = element_text(colour = "#B2182B", face = "bold"),
      axis.text.x = element_text(angle = 45, hjust = 1)
    )
}

# The words that mark what is not measured, as the Python parts say them too
# (scripts/labels.csv is a link to wattzip/data/labels.csv).
honesty_label <- with(fread("scripts/labels.csv", encoding = "UTF-8"), setNames(as.list(text), label))

# Figures whose energy comes from the utilization model say so on themselves.
estimated_subtitle <- function(dt) {
  if (any(dt$meter_method == "estimated", na.rm = TRUE)) {
    honesty_label[["estimated"]]
  } else {
    NULL
  }
}

# The paper's alg-level names in the paper's order, plain first.
order_codecs <- function(dt) {
  tool <- ifelse(dt$codec == "plain", "plain", dt$tool)
  rank <- match(tool, tool_order, nomatch = length(tool_order) + 1)
  level <- suppressWarnings(as.numeric(dt$level))
  codecs <- unique(dt$codec[order(rank, level, dt$codec)])
  factor(dt$codec, levels = codecs)
}

# Operations as the paper pairs them: writes beside writes, reads beside reads.
op_class <- function(op) {
  factor(ifelse(grepl("write", op), "write", "read"), levels = c("write", "read"))
}

energy_unit <- function(joules) {
  if (max(joules, na.rm = TRUE) >= 5000) list(scale = 1e-3, label = "kJ") else list(scale = 1, label = "J")
}

# The primary setting's rows: the study model picked it once (settings.csv, the
# report says by which rule); no script picks a setting by its name or by sorting.
primary_rows <- function(dt) {
  out <- dt[primary == TRUE]
  message("primary setting: ", paste(unique(out$setting), collapse = ", "))
  out
}

# Each factor's column in the analysis tables, as the package lists them
# (scripts/factors.csv is a link to wattzip/data/factors.csv).
factor_table <- fread("scripts/factors.csv", encoding = "UTF-8")
factor_columns <- setNames(factor_table$column, factor_table$name)

# The rows of the settings that differ from the primary one in `factor` alone, so that
# a comparison across its values changes nothing else.
along_factor <- function(dt, factor) {
  others <- setdiff(unname(factor_columns), factor_columns[[factor]])
  primary_values <- unique(dt[primary == TRUE, ..others])
  merge(dt, primary_values, by = others)
}

# A factor's values as a reader names them (bandwidth in MB/s, "unlimited" when uncapped).
factor_label <- function(dt, factor) {
  values <- dt[[factor_columns[[factor]]]]
  if (factor == "bandwidth") {
    return(ifelse(is.na(values), "unlimited", sprintf("%g MB/s", values / 1e6)))
  }
  as.character(values)
}

# Stacked parts of one total per codec and operation, with the summary's half-width
# of the total as an error bar (paper Figures 2, 4, 5, 6).
stacked_bars <- function(parts, totals, ylab, fill_values) {
  ggplot(parts, aes(x = codec, y = value, fill = part)) +
    geom_col(width = 0.75) +
    geom_errorbar(
      data = totals, inherit.aes = FALSE,
      aes(x = codec, ymin = pmax(mean - hw, 0), ymax = mean + hw),
      width = 0.3, linewidth = 0.3
    ) +
    facet_grid(. ~ op_class, scales = "free_x", space = "free_x") +
    scale_fill_manual(values = fill_values, name = NULL) +
    labs(x = "alg-level", y = ylab) +
    theme_wattzip()
}

# Messages of a rule's script go to its log.
# The rule's log takes R's messages; a rule drawing several figures (figures.R) opens it
# once, for all of them.
open_log <- function() {
  if (!identical(getOption("wattzip.log"), snakemake@log[[1]])) {
    sink(file(snakemake@log[[1]], open = "wt"), type = "message")
    options(wattzip.log = snakemake@log[[1]])
  }
}

# The summary rows of the rule's file type (primary setting), ready to plot.
file_type_summary <- function() {
  summary <- read_summary(snakemake@input[["summary"]])
  dt <- primary_rows(summary[file_type == snakemake@wildcards[["ftype"]] & n > 0])
  dt[, codec := order_codecs(dt)]
  dt[, op_class := op_class(op)]
  dt
}

# A rehearsal's tables say so in their `simulated` column: whatever is drawn or set from
# them says SIMULATED on itself, read from the data (not from where it is written).
simulated_label <- honesty_label[["simulated"]]

is_simulated <- function() {
  paths <- unlist(snakemake@input)
  paths <- paths[grepl("\\.csv$", paths)]
  any(vapply(paths, function(p) {
    first <- readLines(p, n = 1, warn = FALSE)
    if (length(first) == 0 || !nzchar(trimws(first))) {
      return(FALSE) # an analysis table with nothing to say (no columns either)
    }
    head <- fread(p, nrows = 1)
    "simulated" %in% names(head) && isTRUE(as.logical(head$simulated[1]))
  }, logical(1)))
}

save_pdf <- function(plot, path, width = 6.5, height = 3.2) {
  dir.create(dirname(path), showWarnings = FALSE, recursive = TRUE)
  if (is_simulated()) {
    plot$labels$caption <- paste(c(simulated_label, plot$labels$caption), collapse = "\n")
    plot <- plot + theme(plot.caption = element_text(colour = "#B2182B", face = "bold", hjust = 0))
  }
  ggsave(path, plot, width = width, height = height, units = "in", device = cairo_pdf)
}
