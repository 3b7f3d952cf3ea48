"""explorer.lessons.cost.numbers: the one notation of the cost lesson's figure and answers."""

import pytest

from explorer.lessons.cost.numbers import count_text, times_text


@pytest.mark.parametrize(("n", "text"), [(0, "0"), (1, "1"), (512, "512"), (4096, "4,096"), (9999, "9,999"),
                                         (10_000, "10.0 k"), (16_640, "16.6 k"), (524_288, "524 k"),
                                         (999_499, "999 k"), (999_999, "1.00 M"), (4_194_304, "4.19 M"),
                                         (41_943_040, "41.9 M"), (2_214_592_512, "2.21 B"), (3 * 10**12, "3.00 T")])
def test_counts_below_ten_thousand_as_they_are_then_three_digits_and_a_unit(n, text):
    assert count_text(n) == text.replace(" ", "\u00a0")  # the unit never breaks onto the next line


@pytest.mark.parametrize(("ratio", "text"), [(10.0, "10"), (66.0, "66"), (3.0, "3"), (2.0, "2"), (2.03125, "2.0"),
                                             (1.96, "2.0"), (2.5, "2.5"), (86.17, "86")])
def test_ratios_whole_when_whole_or_past_ten(ratio, text):
    assert times_text(ratio) == text
