"""Text for the generated report: LaTeX-safe, with the papers' symbols set as math."""

from __future__ import annotations

import math
import re

_ESCAPES = [("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"), ("_", r"\_"),
            ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"),
            ("^", r"\textasciicircum{}")]
_MAGNITUDE = re.compile(r"\\textasciitilde\{\}10\\textasciicircum\{\}([0-9]+)")


def tex(text) -> str:
    """The one LaTeX form of free text (claims, evidence, provenance, the passages): its
    special characters escaped; ∀, ×, ≤, < and > as pdflatex can set them; a magnitude
    "~10^k" set as the tables set it."""
    text = str(text).replace("\\", "\x01")  # a placeholder, so its braces stay unescaped
    for a, b in _ESCAPES:
        text = text.replace(a, b)
    text = (text.replace("\x01", r"\textbackslash{}").replace("∀", r"$\forall$")
            .replace("×", r"$\times$").replace("≤", r"$\le$").replace("<", "$<$")
            .replace(">", "$>$"))
    return _MAGNITUDE.sub(r"$\\sim\\!10^{\1}$", text)


_SYMBOLS = {"∀": r"$\forall$", "✓": r"$\forall$", "×": r"$\times$", "✗": r"$\times$",
            "X": r"$\times$"}


def display_tex(display) -> str:
    """The one LaTeX form of a break-even or ratio cell as the tables show it.

    ∀ (✓): pays at any ratio; × (✗, X): never; "≤ n": only up to n reads per write;
    "~10^k": a magnitude; a trailing "?": the intervals cannot decide the kind.
    """
    text = "" if display is None else str(display).strip()
    if text in ("", "nan", "NA"):
        return "--"
    undecided = text.endswith("?")
    text = text.rstrip("?").strip()
    if text in _SYMBOLS:
        shown = _SYMBOLS[text]
    elif text.startswith("~10^"):
        shown = rf"$\sim\!10^{{{text[4:]}}}$"
    elif text.startswith("≤"):
        shown = r"$\le$\," + tex(text[1:].strip())
    else:
        shown = tex(text)
    return shown + (r"\textsuperscript{?}" if undecided else "")


def number(cell) -> float:
    """A table's cell as a number: NaN where it is empty or no number."""
    try:
        return float(cell)
    except (TypeError, ValueError):
        return math.nan


def fixed_tex(value, digits: int) -> str:
    """A measured number's cell with a fixed number of decimals; "--" where there is none
    (an empty CSV cell, NaN), never "nan" or "NA"."""
    value = number(value)
    return "--" if math.isnan(value) else f"{value:.{digits}f}"


def mean_tex(mean, half_width, digits: int, scale: float = 1.0) -> str:
    """A mean with its half-width, "12.3\\,$\\pm$\\,1.2" (both times `scale`, as a share
    in percent); the mean alone where there is no half-width (fewer than two runs)."""
    shown = fixed_tex(number(mean) * scale, digits)
    spread = number(half_width) * scale
    if shown == "--" or math.isnan(spread):
        return shown
    return rf"{shown}\,$\pm$\,{spread:.{digits}f}"


def interval_tex(value, lo, hi, digits: int, space: str = r"\,") -> str:
    """A ratio with its interval, "0.84\\,[0.80, 0.88]" (Fieller's is not symmetric, so not
    a half-width); "unbounded" where the interval is; the ratio alone where it has none
    (an arm of one run). `space` goes before the bracket: a thin space, or in a Markdown
    table a plain one."""
    shown, lo, hi = fixed_tex(value, digits), number(lo), number(hi)
    if shown == "--" or math.isnan(lo) or math.isnan(hi):
        return shown
    if math.isinf(lo) or math.isinf(hi):
        return rf"{shown}{space}[unbounded]"
    return rf"{shown}{space}[{lo:.{digits}f}, {hi:.{digits}f}]"
