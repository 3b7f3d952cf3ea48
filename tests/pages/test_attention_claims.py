"""Every sentence beside the self-attention grid holds for the grid shown (issue 28, item 2): the
mask sentence counts the grey cells drawn, a "What to notice" about a mask is shown only when that
mask is on screen, a trained model's notice only when a trained model ran, and the Weights control
says what the banner says.  Read back from the rendered page over many settings."""

import dataclasses
import re

import numpy as np
import pytest

from explorer.lessons.attention.notices import CHECKS, Seen, mask_claim, notices
from explorer.lessons.attention.view import AttentionSettings, attention_lesson_view
from harness.apptest import run_page
from tests.pages.test_page_attention import PAGE, grey_cells, grid, label

TASKS = ("reverse", "sort", "coreference", "induction", "recall")
SETTINGS = [
    {"heads": "2", "mask": "none", "task": "sort"},  # the issue's link
    *({"task": task, "mask": mask} for task in TASKS for mask in ("none", "causal", "padding")),
    *({"task": task, "weights": "random"} for task in TASKS),
    *({"task": task, "heads": "8", "layers": "1"} for task in TASKS),
    {"task": "reverse", "block": "encoder"}, {"task": "reverse", "block": "cross"},
    {"task": "sort", "block": "cross"}, {"task": "sort", "block": "encoder", "mask": "padding"},
    {"task": "reverse", "block": "cross", "mask": "none"}, {"task": "coreference", "encoding": "learned"},
    {"task": "induction", "layers": "1"}, {"task": "recall", "layers": "4", "heads": "1"},
    {"task": "coreference", "input_coreference": "the dog didn't catch the cat because it was too fast",
     "mask": "causal"},
]


def notes(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith(("**Mask.**", "**What to notice.**", "You are running"))]


@pytest.mark.parametrize("params", SETTINGS, ids=lambda p: "&".join(f"{k}={v}" for k, v in p.items()))
def test_what_the_page_says_beside_the_grid_holds_for_the_grid(params):
    at = run_page(PAGE, params)
    assert not at.exception
    _, figure = grid(at)
    grey = grey_cells(figure)
    said, running = notes(at), label(at)
    trained = running.startswith("Running trained model")
    assert (at.radio(key="weights").value == "trained") == trained, "the Weights control says what the banner says"
    mask_notes = [n for n in said if n.startswith("**Mask.**")]
    assert len(mask_notes) == 1
    if not any(g.any() for g in grey):
        assert mask_notes[0].startswith("**Mask.** No cell is grey")
        assert not any("grey" in n for n in said if n not in mask_notes), "no sentence about grey cells"
    else:
        assert "No cell is grey" not in mask_notes[0]
        if "above the diagonal" in mask_notes[0]:
            cells = int(re.search(r"above the diagonal of each panel \((\d+) cells?", mask_notes[0])[1])
            future = np.triu(np.ones_like(grey[0]), 1)
            assert all(int((g & future).sum()) == cells == int(future.sum()) for g in grey)
        if "padding" in mask_notes[0]:
            # The padding columns: grey for every query in every panel, at the end (tick labels are thinned).
            pads = [j for j in range(grey[0].shape[1]) if all(g[:, j].all() for g in grey)]
            assert pads == list(range(grey[0].shape[1] - len(pads), grey[0].shape[1])), pads
            assert int(re.search(r"(\d+) columns?", mask_notes[0])[1]) == len(pads) > 0
            assert all(g[:, pads].all() for g in grey)
    upper_grey = all(np.array_equal(g, np.triu(np.ones_like(g), 1)) for g in grey)
    for note in said:
        if "upper triangle is grey" in note or "greys out the upper triangle" in note:
            assert upper_grey, f"says the causal mask is on screen: {note}"
    assert any("never trained" in n for n in said) == (not trained)
    assert any(n.startswith("You are running") for n in said) == (trained and _off_natural(at))


def _off_natural(at) -> bool:
    natural = "none" if at.selectbox(key="task").value == "coreference" else "causal"
    return at.radio(key="mask").value != natural


def test_the_issue_link_shows_no_grey_mask_claim_and_random_weights_in_the_control():
    at = run_page(PAGE, {"heads": "2", "mask": "none", "task": "sort"})
    said = " ".join(notes(at))
    assert "grey" not in said.replace("No cell is grey", "")
    assert at.radio(key="weights").value == "random" and at.radio(key="weights").options == ["random"]
    assert "no trained model is shipped" in label(at)


def test_a_planted_false_claim_is_caught():
    """A notice about the causal mask checked against a view without it fails its check; the mask
    sentence follows the mask shown."""
    view = attention_lesson_view(AttentionSettings(mask="none"))
    seen = Seen(view.attention, tuple(view.run.attention.output_tokens), True, "none", "causal", view.expected, None)
    assert not CHECKS["notice: sort decoder"](seen) and not CHECKS["notice: reverse decoder"](seen)
    assert mask_claim(view.attention)[0] == "mask: none"
    names = [name for name, _ in notices("reverse", "decoder", seen)]
    assert "notice: reverse decoder" not in names and "off-mask" in names
    causal = attention_lesson_view(AttentionSettings())
    assert mask_claim(causal.attention)[0] == "mask: causal"
    assert not CHECKS["random"](seen) and CHECKS["random"](dataclasses.replace(seen, trained=False))
    assert not CHECKS["off-mask"](dataclasses.replace(seen, trained=False)), "no 'it was trained with' for random"
