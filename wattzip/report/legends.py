"""What the tables' marks mean, written beside the marks themselves: the dagger of a
break-even cell the energy model decides (wattzip.analysis.robustness) and the star of
a verdict on estimated energy. The cells' modules put these legends in the tables'
notes; the R tables print the notes as given, so a mark and its legend cannot drift
apart."""

from __future__ import annotations

from wattzip.analysis.agreement import LEGEND_TEX, Agreement, count_text
from wattzip.analysis.robustness import MODEL_DEPENDENT_TEX
from wattzip.latex import tex
from wattzip.resources import label

ESTIMATED_VERDICT_TEX = r"$^{\ast}$"  # a claim's verdict that rests on estimated energy
SEED_DISAGREEMENT_TEX = r"$^{\S}$"  # an original's cell another seed contradicts

ESTIMATED = rf"\textbf{{{tex(label('estimated'))}}}."  # the figures' subtitle's words
MODEL_DEPENDENT = (rf"{MODEL_DEPENDENT_TEX}: decided otherwise at the coefficient table's "
                   "other extreme (depends on the model).")
ESTIMATED_VERDICT = (rf"{ESTIMATED_VERDICT_TEX} The verdict rests on "
                     rf"{tex(label('estimated'))}. Decided again at the coefficient table's "
                     "extremes, it is robust to the model or depends on it.")


def breakeven_marks(levels_tex: str) -> str:
    """The legend of a break-even cell's marks, set by the cells' own formatter (tex), at
    the levels the analysis decided the cells; the intervals as the text names them
    (\\BeIntervals: Welch's or moderated, by the design)."""
    return (f"{tex('∀')}: compression pays at any ratio; {tex('×')}: never; {tex('≤')}: "
            r"pays only up to that many reads per write; $\sim\!10^{k}$: magnitude; "
            r"\textsuperscript{?}: the \BeIntervals{} intervals of the extra write cost and "
            f"the saving per read ({levels_tex}) cannot decide the kind.")


def agreement_marks(agreements: list[Agreement]) -> list[str]:
    """The legend of the agreement marks (wattzip.analysis.agreement) and the table's
    count of them; none where no cell has an original."""
    if not agreements:
        return []
    return [LEGEND_TEX, f"Here {count_text(agreements)} with the original."]


def seed_disagreements(notes: list[str]) -> list[str]:
    """The legend of the originals' cells another seed contradicts, each with what the
    other says (wattzip.analysis.reference.disagreement_notes); none where none is."""
    if not notes:
        return []
    return [rf"{SEED_DISAGREEMENT_TEX} The seeds disagree on the original's cell: "
            + "; ".join(tex(n) for n in dict.fromkeys(notes)) + "."]


def estimated_energy(estimated: bool) -> list[str]:
    """A table's note on estimated energy: none where its energy is measured."""
    return [ESTIMATED] if estimated else []


def estimated_cells(estimated: bool) -> list[str]:
    """A break-even table's notes on estimated energy, its dagger's legend with it."""
    return [ESTIMATED, MODEL_DEPENDENT] if estimated else []


def note(*parts: str | list[str]) -> str:
    """A table's note: its sentences, and the lists of legends, in one line."""
    return " ".join(p for part in parts for p in ([part] if isinstance(part, str) else part))
