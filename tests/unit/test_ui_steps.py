"""The heading of a lesson step (explorer.kit.steps.step_heading): one full stop, never two marks."""

import pytest

from explorer.kit.steps import fold, load_steps, step_heading, visible_length


@pytest.mark.parametrize(("title", "expected"), [
    ("Twelve layers without the short cut", "**Step 2 of 5 · Twelve layers without the short cut.**"),
    ("Where does “it” look?", "**Step 2 of 5 · Where does “it” look?**"),
    ("Stop!", "**Step 2 of 5 · Stop!**"),
    ("Ends with a stop.", "**Step 2 of 5 · Ends with a stop.**"),
    ("Path length: O(T) against O(1)", "**Step 2 of 5 · Path length: O\\(T\\) against O\\(1\\).**"),
])
def test_the_heading_ends_with_one_mark(title, expected):
    assert step_heading(2, 5, title) == expected


@pytest.mark.parametrize("page", ["lookup", "attention", "positions", "gradients", "cost", "depth"])
def test_no_shipped_step_heading_has_a_doubled_mark(page):
    steps = load_steps(page)
    assert steps, f"{page} has no lesson steps"
    for number, step in enumerate(steps, start=1):
        heading = step_heading(number, len(steps), step.title)
        assert not any(pair in heading for pair in ("?.", "!.", "..", ".**.")), heading


FOUR = "Alpha beta gamma delta. Epsilon zeta eta theta. Iota kappa lambda mu. Nu xi omicron pi."


@pytest.mark.parametrize(("budget", "kept"), [(23, 1), (46, 1), (47, 2), (68, 2), (69, 3), (1000, 4)])
def test_an_answer_folds_after_its_last_whole_sentence_within_the_budget(budget, kept):
    sentences = [s if s.endswith(".") else s + "." for s in FOUR.split(". ")]
    shown, rest = fold(FOUR, budget)
    assert shown == " ".join(sentences[:kept])
    assert rest == " ".join(sentences[kept:])
    assert visible_length(shown) <= max(budget, len(sentences[0]))


def test_the_first_sentence_stays_whole_even_past_the_budget():
    assert fold(FOUR, 5) == ("Alpha beta gamma delta.",
                             "Epsilon zeta eta theta. Iota kappa lambda mu. Nu xi omicron pi.")


def test_no_fold_inside_bold_or_code_and_marks_count_as_nothing():
    text = "One two. **Bold one. Bold two.** After. `a. B` end."
    assert visible_length("**ab** `c`") == 4
    shown, rest = fold(text, 12)  # "One two. Bold one." is 18 visible: the boundary inside the bold is no boundary
    assert (shown, rest) == ("One two.", "**Bold one. Bold two.** After. `a. B` end.")
    shown, rest = fold(text, 33)
    assert (shown, rest) == ("One two. **Bold one. Bold two.** After.", "`a. B` end.")
    assert shown.count("**") % 2 == 0 and rest.count("`") % 2 == 0
