# LaTeX output helpers shared by the table scripts: escaping of labels (names and
# captions; the cells come set by wattzip.latex) and a booktabs tabular writer.

tex_escape <- function(x) {
  x <- gsub("\\", "\001", x, fixed = TRUE) # placeholder, so its braces stay unescaped
  x <- gsub("([&%$#_{}])", "\\\\\\1", x)
  x <- gsub("~", "\\textasciitilde{}", x, fixed = TRUE)
  x <- gsub("^", "\\textasciicircum{}", x, fixed = TRUE)
  x <- gsub("<", "$<$", x, fixed = TRUE) # OT1 fonts set < and > as other glyphs
  x <- gsub(">", "$>$", x, fixed = TRUE)
  gsub("\001", "\\textbackslash{}", x, fixed = TRUE)
}

# A booktabs tabular's lines, its note below it.
tabular_lines <- function(dt, align, header = names(dt), note = NULL) {
  rows <- apply(as.matrix(dt), 1, paste, collapse = " & ")
  lines <- c(
    sprintf("\\begin{tabular}{%s}", align), "\\toprule",
    paste0(paste(header, collapse = " & "), " \\\\"), "\\midrule",
    paste0(rows, " \\\\"), "\\bottomrule", "\\end{tabular}"
  )
  if (!is.null(note)) lines <- c(lines, "", sprintf("\\par\\smallskip{\\footnotesize %s}", note))
  lines
}

write_tabular <- function(dt, path, align, header = names(dt), note = NULL) {
  write_tex_lines(tabular_lines(dt, align, header, note), path)
}

# Every table's file: a rehearsal's says SIMULATED above the table (is_simulated, theme.R).
write_tex_lines <- function(lines, path) {
  if (is_simulated()) {
    lines <- c(sprintf("{\\color{red!70!black}\\bfseries %s}\\par\\smallskip", tex_escape(simulated_label)), lines)
  }
  dir.create(dirname(path), showWarnings = FALSE, recursive = TRUE)
  writeLines(lines, path)
}

# One row per codec in the paper's order, one column per file type (the paper's
# four first), each cell as wattzip.report.comparison_cells set it.
wide_by_file_type <- function(dt) {
  dt[, codec := order_codecs(dt)]
  types <- intersect(c("text", "binary", "random", "zero"), unique(dt$file_type))
  types <- c(types, setdiff(sort(unique(dt$file_type)), types))
  wide <- dcast(dt, codec ~ factor(file_type, levels = types), value.var = "cell", fill = "--")
  setorder(wide, codec)
  wide[, codec := as.character(codec)]
  wide
}

# A cells table (wattzip.report.comparison_cells) by file type: one row per codec, the
# cells aligned by `cell_align` ("r" for numbers, "c" for pairs), the note below.
write_by_file_type <- function(cells_path, path, cell_align) {
  cells <- read_summary(cells_path, "cell")
  wide <- wide_by_file_type(cells)
  write_tabular(
    wide, path, paste0("l", strrep(cell_align, ncol(wide) - 1)),
    header = c("Tool", names(wide)[-1]), note = table_note(cells)
  )
}

# A table's note as its cells' rule set it (the note column, one per table), with the
# legends of its marks (wattzip.report.legends); none for a table without rows.
table_note <- function(cells) {
  note <- if (nrow(cells) == 0) NA else cells$note[1]
  if (is.na(note) || !nzchar(note)) NULL else note
}
