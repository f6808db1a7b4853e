# The testbed: hardware, software, meter and the tools' versions. Every cell is set by
# rule text_cells (wattzip.report.text_cells); this script lays them out.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

prov <- fread(snakemake@input[["cells"]], colClasses = "character", encoding = "UTF-8")
write_tabular(prov[, .(key, value)], snakemake@output[[1]], "lp{0.62\\linewidth}",
              header = c("Property", "Value"))
