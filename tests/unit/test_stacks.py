"""Plain against residual stacks, trained (#62): the shipped curves show He et al.'s degradation, the
command in the repository made them (it replays their first points), and a damaged file says how to
remake it."""

import json
import math

import numpy as np
import pytest

from explorer.analysis.stacks import stack_curves, stack_facts
from explorer.training import stacks
from explorer.training.stacks import (
    COMMAND,
    CURVES_PATH,
    DEPTHS,
    RECORD_EVERY,
    SEEDS,
    WIRINGS,
    StackCurvesError,
    read_curves,
    train_stack,
)
from explorer.training.tasks import InductionTask
from explorer.training.train import write_model_table

LAST = 5  # stack_facts' default: the final loss is the mean of the last five recorded points


def _final_losses_from_the_file() -> dict:
    """(depth, wiring, seed) → final loss, read from the JSON with nothing of explorer's but the path."""
    card = json.loads(CURVES_PATH.read_text())
    return {(run["depth"], run["wiring"], run["seed"]): sum(run["loss"][-LAST:]) / LAST for run in card["runs"]}


def test_the_shipped_curves_show_the_degradation_in_every_seed():
    final = _final_losses_from_the_file()
    seeds = json.loads(CURVES_PATH.read_text())["seeds"]
    assert len(seeds) >= 3
    for seed in seeds:
        assert final[("deep", "plain", seed)] > final[("shallow", "plain", seed)], seed
        assert final[("deep", "residual", seed)] <= final[("shallow", "residual", seed)], seed
        assert final[("deep", "plain", seed)] > final[("deep", "residual", seed)], seed


def test_the_facts_agree_with_the_file():
    curves = stack_curves()
    facts = stack_facts(curves)
    final = _final_losses_from_the_file()
    assert facts.n_seeds == len(curves.seeds) == len(SEEDS)
    assert facts.deep_plain_above_shallow_plain and facts.deep_plain_above_deep_residual
    assert not facts.deep_residual_above_shallow_residual
    for (depth, wiring), cell in facts.final.items():
        expected = [final[(depth, wiring, seed)] for seed in curves.seeds]
        np.testing.assert_allclose(cell.per_seed, expected, rtol=1e-12)
        assert (cell.low, cell.mean, cell.high) == pytest.approx((min(expected), sum(expected) / 3, max(expected)))
    values = facts.values()
    assert values["plain_gap_least"] == pytest.approx(min(
        final[("deep", "plain", s)] - final[("shallow", "plain", s)] for s in curves.seeds))
    assert values["deep_plain_mean"] == pytest.approx(facts.final[("deep", "plain")].mean)
    assert curves.steps.tolist() == list(range(RECORD_EVERY, curves.card["steps"] + 1, RECORD_EVERY))


def test_the_deep_plain_stack_ends_where_a_guess_that_ignores_the_input_would():
    """Its loss is ln(number of symbols): the same probability for every symbol, whatever it reads."""
    curves = stack_curves()
    assert curves.uniform_guess_loss == pytest.approx(math.log(InductionTask().n_symbols), abs=1e-6)
    facts = stack_facts(curves)
    deep_plain = facts.final[("deep", "plain")].per_seed
    assert facts.deep_plain_from_uniform_guess == pytest.approx(np.abs(deep_plain - math.log(24)).max(), abs=1e-6)
    assert facts.deep_plain_from_uniform_guess < 0.01
    assert all(facts.final[cell].high < math.log(24) - 0.5 for cell in (("shallow", "plain"), ("deep", "residual")))


def test_the_facts_notice_a_seed_that_does_not_show_it(tmp_path):
    """Built from a file where seed 1's deep plain stack ends below its shallow one: not 'every seed'."""
    card = json.loads(CURVES_PATH.read_text())
    for run in card["runs"]:
        if run["seed"] == 1 and run["wiring"] == "plain":
            run["loss"] = [0.5 if run["depth"] == "shallow" else 0.25] * len(run["loss"])
        if run["seed"] == 2 and run["wiring"] == "residual":
            run["loss"] = [0.5 if run["depth"] == "deep" else 0.25] * len(run["loss"])
    path = tmp_path / "curves.json"
    path.write_text(json.dumps(card))
    facts = stack_facts(stack_curves(path))
    assert not facts.deep_plain_above_shallow_plain
    assert facts.deep_residual_above_shallow_residual
    assert facts.plain_gap[1] == pytest.approx(-0.25) and facts.residual_gap[2] == pytest.approx(0.25)


def test_the_card_says_how_the_curves_were_made():
    card = read_curves()
    assert card["command"] == COMMAND == "python -m explorer.training.stacks"
    assert card["depths"] == DEPTHS and card["wirings"] == WIRINGS and card["seeds"] == list(SEEDS)
    assert card["threads"] == 1 and card["torch_version"] and card["python_version"]
    assert 0 < card["cpu_time_s"] <= 6 * 60 and card["wall_time_s"] > 0  # the budget: six minutes of one thread
    assert "LayerNorm" in card["normalisation"] and "BatchNorm" in card["normalisation"]
    parameters = {depth: {run["parameters"] for run in card["runs"] if run["depth"] == depth} for depth in DEPTHS}
    assert all(len(counts) == 1 for counts in parameters.values())  # plain and residual: the same weights
    assert parameters["deep"].pop() > parameters["shallow"].pop()


@pytest.mark.parametrize("seed", SEEDS)
def test_the_command_replays_the_first_recorded_points(seed):
    """Every cell of the seed, trained again up to its first recorded point on the shipped schedule."""
    shipped = {(run["depth"], run["wiring"]): run for run in read_curves()["runs"] if run["seed"] == seed}
    for depth, n_layers in DEPTHS.items():
        for wiring, residual in WIRINGS.items():
            run = train_stack(n_layers, residual, seed, stop_after=RECORD_EVERY)
            assert len(run["loss"]) == 1
            expected = shipped[(depth, wiring)]
            np.testing.assert_allclose(run["loss"], expected["loss"][:1], rtol=0, atol=1e-6, err_msg=depth + wiring)
            np.testing.assert_allclose(run["accuracy"], expected["accuracy"][:1], rtol=0, atol=1e-6)
            assert run["parameters"] == expected["parameters"]


def test_the_command_writes_a_file_the_loader_reads(tmp_path, monkeypatch):
    """main() end to end on a tiny budget: the file it writes passes read_curves and makes facts."""
    monkeypatch.setattr(stacks, "DEPTHS", {"shallow": 1, "deep": 2})
    monkeypatch.setattr(stacks, "SEEDS", (0, 1))
    monkeypatch.setattr(stacks, "STEPS", 2 * RECORD_EVERY)
    out = tmp_path / "curves.json"
    assert stacks.main(["--out", str(out), "--quiet"]) == 0
    card = read_curves(out)
    assert len(card["runs"]) == 2 * 2 * 2 and card["recorded_at_steps"] == [RECORD_EVERY, 2 * RECORD_EVERY]
    assert all(math.isfinite(v) for run in card["runs"] for v in run["loss"])
    assert set(stack_facts(stack_curves(out), last_points=1).final) == {
        (d, w) for d in ("shallow", "deep") for w in ("plain", "residual")}


def test_the_model_table_names_the_curves_and_the_shipped_one_is_current(tmp_path):
    (tmp_path / CURVES_PATH.name).write_text(CURVES_PATH.read_text())
    note = [line for line in write_model_table(tmp_path).read_text().splitlines() if CURVES_PATH.name in line]
    assert len(note) == 1 and COMMAND in note[0] and f"{len(SEEDS)} seeds" in note[0]
    assert f"deep ({DEPTHS['deep']} layers)" in note[0]
    assert note[0] in (CURVES_PATH.parent / "README.md").read_text().splitlines()
    (tmp_path / CURVES_PATH.name).unlink()
    assert CURVES_PATH.name not in write_model_table(tmp_path).read_text()


def _damaged(tmp_path, change) -> str:
    card = json.loads(CURVES_PATH.read_text())
    text = change(card)
    path = tmp_path / "stacks-training-curves.json"
    path.write_text(text if isinstance(text, str) else json.dumps(card))
    with pytest.raises(StackCurvesError) as raised:
        read_curves(path)
    message = str(raised.value)
    assert message.startswith("stacks-training-curves.json: ") and message.endswith(f"Regenerate it with: {COMMAND}")
    return message


def test_a_malformed_file_names_itself_and_the_command(tmp_path):
    with pytest.raises(StackCurvesError, match="the file is missing"):
        read_curves(tmp_path / "stacks-training-curves.json")
    assert "not valid JSON" in _damaged(tmp_path, lambda card: '{"runs": [')
    assert "not a JSON object" in _damaged(tmp_path, lambda card: "[1, 2]")
    assert "lacks ['runs']" in _damaged(tmp_path, lambda card: card.pop("runs") and None)
    assert "one per depth × wiring × seed" in _damaged(tmp_path, lambda card: card["runs"].pop() and None)
    assert "'loss' is not" in _damaged(tmp_path, lambda card: card["runs"][0]["loss"].pop() and None)
    assert "'accuracy' is not" in _damaged(
        tmp_path, lambda card: card["runs"][3]["accuracy"].__setitem__(0, float("nan")))
    assert "'loss' is not" in _damaged(tmp_path, lambda card: card["runs"][5]["loss"].__setitem__(-1, "1.0"))
