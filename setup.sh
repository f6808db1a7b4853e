#!/usr/bin/env bash
# Installs what the study needs and is missing, on Debian 12 as root (or through
# sudo): Debian packages (Python, the compressors, filesystem tools, libfuse3 for
# the emulated disks, R with data.table and ggplot2, LaTeX, hyperfine, the kernel
# source for the text input, ipmitool and perf for the IPMI and perf meters), then
# a virtual environment in the checkout, .venv, holding wattzip, Snakemake and the
# test tools. Never a system-wide pip install.
# Run again, it checks and changes nothing.
set -euo pipefail
cd "$(dirname "$0")"

# The compressors: each codec family's `package:` in wattzip/data/codecs.yaml.
mapfile -t codec_debs < <(sed -n 's/^ *package: *//p' wattzip/data/codecs.yaml | sort -u)
debs=(
  python3 python3-venv git "${codec_debs[@]}"
  hyperfine linux-source-6.1 ipmitool linux-perf
  e2fsprogs xfsprogs btrfs-progs btrfs-compsize mount util-linux kmod libfuse3-3 fuse3
  r-base-core r-cran-data.table r-cran-ggplot2
  latexmk texlive-latex-base texlive-latex-recommended texlive-fonts-recommended
  poppler-utils
)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# The venv is built on Debian's Python, whatever else is first on PATH, so that
# every machine runs the same interpreter.
venv=.venv
stamp="$venv/.wattzip-setup"
want=$(cat pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import sys" 2>/dev/null; then
  echo "setup: creating the virtual environment $venv (Debian's /usr/bin/python3)" >&2
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] \
  || ! "$venv/bin/python" -c "import wattzip, snakemake, scipy, snakefmt, pytest, xdist, snakemake_executor_plugin_slurm" 2>/dev/null; then
  echo "setup: installing wattzip, Snakemake and the test tools into $venv" >&2
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q -e ".[workflow,test]"
  echo "$want" >"$stamp"
fi
echo "setup: ready in ${SECONDS} s; run the study with $venv/bin/snakemake --cores all" >&2
