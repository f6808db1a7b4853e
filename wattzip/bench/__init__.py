"""`wattzip bench`: hyperfine with joules, for any command.

commands (parameters, names, argv), loop (hooks, warm-up, the measured region of
wattzip.measure.runner, interleaved looks, outliers), progress, summary (time, energy, Fieller
ratios and verdicts per pair), report (the terminal's text), export/ (json, csv,
markdown, one module each) and options (the command line and the run under the lock).
"""
