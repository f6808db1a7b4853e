"""Text for the generated report: LaTeX-safe, with the papers' symbols set as math."""

from __future__ import annotations

_ESCAPES = [("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"),
            ("#", r"\#"), ("_", r"\_"), ("{", r"\{"), ("}", r"\}"),
            ("~", r"\textasciitilde{}"), ("^", r"\textasciicircum{}")]


def tex(text) -> str:
    """Escape LaTeX's special characters; ∀, ×, ≤, < and > as pdflatex can set them."""
    text = str(text)
    for a, b in _ESCAPES:
        text = text.replace(a, b)
    return (text.replace("∀", r"$\forall$").replace("×", r"$\times$")
            .replace("≤", r"$\le$").replace("<", "$<$").replace(">", "$>$"))
