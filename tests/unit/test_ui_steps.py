"""The heading of a lesson step (explorer.kit.steps.step_heading): one full stop, never two marks."""

import pytest

from explorer.kit.steps import load_steps, step_heading


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
