# The testbed: hardware, software, meter and the tools' versions.
source("scripts/theme.R")
source("scripts/tex.R")
open_log()

prov <- fread(snakemake@input[["provenance"]], colClasses = "character", encoding = "UTF-8")
prov[, value := tex_text(value)]
prov[, key := tex_text(key)]
write_tabular(prov[, .(key, value)], snakemake@output[[1]], "lp{0.62\\linewidth}",
              header = c("Property", "Value"))
