#!/usr/bin/env bash
# Installs what the study needs and is missing: Debian packages (compressors,
# R with data.table and ggplot2, LaTeX, hyperfine, the kernel source for the
# text input) and the Python package with Snakemake. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(
  gzip lzop bzip2 ncompress 7zip zstd lz4 xz-utils brotli pigz pbzip2 lbzip2
  hyperfine linux-source-6.1 ipmitool
  r-base-core r-cran-data.table r-cran-ggplot2
  latexmk texlive-latex-base texlive-latex-recommended texlive-fonts-recommended
  poppler-utils
)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! python3 -c "import wattzip, snakemake, scipy, snakefmt" 2>/dev/null; then
  echo "setup: installing the wattzip package with Snakemake and the test tools" >&2
  python3 -m pip install -q -e ".[workflow,test]"
fi
