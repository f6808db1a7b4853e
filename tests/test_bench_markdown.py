"""wattzip bench's Markdown export: the numbers as a reader of the table sees them."""

from __future__ import annotations

import pytest

from wattzip.bench.export import markdown_export


@pytest.mark.parametrize("mean, half_width, shown", [
    (0.559, 0.27, "0.56 ± 0.27"),
    (12.3456, 0.0996, "12.35 ± 0.10"),  # rounds up to a power of ten: still 2 figures
    (1.0, 0.1, "1.00 ± 0.10"),
    (3.14159, 0.00999, "3.142 ± 0.010"),
    (523.4, 123.4, "523 ± 123"),
    (4.2, 0.0, "4.2 ± 0"),
])
def test_the_markdown_plus_minus_has_two_figures_and_the_mean_its_places(mean, half_width,
                                                                        shown):
    assert markdown_export._plus_minus(mean, half_width) == shown
