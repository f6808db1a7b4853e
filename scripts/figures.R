# The figures of one rule in one R process: each figure script runs as Snakemake would
# run it alone, its `snakemake` object holding its own output (and the rule's inputs,
# params, wildcards and log, with the figure's own wildcards added), so that R and its
# packages start once per rule instead of once per figure.
# Which figures a rule draws, and the wildcards each adds, the layout reads from each
# script's `# wattzip-figure:` line (wattzip.model.layout.figure_scripts).
draw_figures <- function(rule, figures) {
  for (name in names(figures)) {
    figure <- figures[[name]]
    job <- rule
    job@output <- list(rule@output[[name]])
    for (wildcard in names(figure$wildcards)) {
      job@wildcards[[wildcard]] <- figure$wildcards[[wildcard]]
    }
    assign("snakemake", job, envir = globalenv())
    before <- ls(globalenv(), all.names = TRUE)
    withCallingHandlers(
      sys.source(file.path(rule@scriptdir, figure$script), envir = globalenv()),
      error = function(e) message(sprintf("figure %s (%s) failed", name, figure$script))
    )
    # what one figure's script left behind never reaches the next one
    rm(list = setdiff(ls(globalenv(), all.names = TRUE), before), envir = globalenv())
  }
}

draw_figures(snakemake, snakemake@params[["figures"]])
