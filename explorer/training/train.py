"""Train the shipped models:  python -m explorer.training.train NAME [NAME …] | --all [--jobs 2] | --list

Each model trains on one CPU thread with fixed seeds and deterministic algorithms, so the same
machine reproduces the same weights; `--all` trains two models at a time to use both cores.
Weights go to pretrained/NAME.safetensors with a card pretrained/NAME.json, and
pretrained/README.md gets a table of every card.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import functools
import itertools
import json
import math
import multiprocessing
import platform
import signal
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import save_file
from torch.nn import functional as F

from ..model.building import seeded
from ..model.parameters import count_parameters
from .curves import CURVES_PATH, read_curves
from .pretrained import (
    MODEL_SPECS,
    PRETRAINED_DIR,
    AttentionHint,
    ModelSpec,
    build_model,
    distance_band_edges,
    evaluate,
    find_spec,
    forward,
    model_config,
    recall_correct,
    sha256_of,
)
from .tasks import CoreferenceTask, RecallTask, get_task

__all__ = ["main", "train", "write_model_table"]


def _learning_rate(step: int, steps: int, peak: float) -> float:
    """Linear warm-up over the first 5 % of steps, then cosine decay to zero."""
    warmup = max(1, steps // 20)
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def _progress(name: str, step: int, steps: int, loss: float, started: float) -> None:
    filled = int(20 * step / steps)
    line = (f"[{name}] [{'#' * filled}{'.' * (20 - filled)}] {step}/{steps} "
            f"loss {loss:.4f} {time.perf_counter() - started:5.1f}s")
    if sys.stderr.isatty():
        print("\r" + line, end="" if step < steps else "\n", file=sys.stderr, flush=True)
    elif step == steps or step % max(1, steps // 10) == 0:
        print(line, file=sys.stderr, flush=True)


def referent_attention(model, task: CoreferenceTask) -> dict:
    """For each (layer, head): how often attention from "it" weighs the right noun above the other,
    on the held-out set.  Returns the best head and its score, to be named in the model card, and
    every head's score."""
    batch = task.evaluation()
    _, trace = model(batch.inputs, valid=batch.valid)
    it = task.it_position
    rows = torch.arange(len(batch.inputs))
    right = torch.zeros_like(batch.inputs, dtype=torch.bool)
    right[rows, task.referent_positions(batch)] = True
    is_noun = torch.zeros_like(batch.inputs, dtype=torch.bool)
    for noun in task.nouns:
        is_noun |= batch.inputs == task.index[noun]
    wrong = is_noun & ~right
    scores = {}
    for layer, layer_trace in enumerate(trace.encoder_layers):
        weights = layer_trace.self_attention.weights[:, :, it]  # (B, heads, T)
        for head in range(weights.shape[1]):
            w = weights[:, head]
            margin = (w * right).sum(1) > (w * wrong).sum(1)
            scores[(layer, head)] = margin.float().mean().item()
    (layer, head), score = max(scores.items(), key=lambda item: item[1])
    return {"layer": layer, "head": head, "right_noun_above_other": score,
            "every_head": {f"layer {lay + 1} head {h + 1}": round(v, 3) for (lay, h), v in scores.items()}}


def recall_bands(model, task: RecallTask) -> dict:
    """Held-out accuracy over ranges of distance 1–8, 9–32, 33–64, 65–128, 129–256, … (the recall
    lesson's curve in a few numbers, for the card and the table)."""
    distance, right = recall_correct(model, task)
    return {f"{lo}–{hi - 1}": round(float(right[(distance >= lo) & (distance < hi)].mean()), 4)
            for lo, hi in itertools.pairwise(distance_band_edges(task.max_distance))}


class LearningCurve:
    """Held-out accuracy by distance band at a few steps during training (the recall task): which
    gaps a model learns first, and when.  Called by `_optimise` after every step; evaluates every
    50 steps up to 500, then every 250, and at the end.  Its time is kept apart from training's."""

    def __init__(self, task: RecallTask, steps: int):
        self.task = task
        self.at = {*range(50, min(500, steps) + 1, 50), *range(750, steps + 1, 250), steps}
        self.points: dict[int, dict] = {}
        self.seconds = 0.0

    def __call__(self, step: int, model) -> None:
        if step in self.at:
            started = time.perf_counter()
            model.eval()
            self.points[step] = recall_bands(model, self.task)
            model.train()
            self.seconds += time.perf_counter() - started

    def card(self) -> dict:
        steps = sorted(self.points)
        bands = list(self.points[steps[-1]]) if steps else []
        return {"about": "held-out accuracy by distance band after each of these training steps",
                "steps": steps, "accuracy": {band: [self.points[s][band] for s in steps] for band in bands},
                "evaluation_s": round(self.seconds, 1)}


def head_ablation(model, task) -> dict:
    """Held-out accuracy with one head silenced at a time (its slice of the output projection set
    to zero, on a copy): how much the model relies on each head."""
    result = {}
    for layer_index, layer in enumerate(model.encoder.layers):
        attention = layer.self_attn
        for head in range(attention.n_heads):
            silenced = copy.deepcopy(model)
            columns = slice(head * attention.head_dim, (head + 1) * attention.head_dim)
            silenced.encoder.layers[layer_index].self_attn.out_proj.weight.data[:, columns] = 0
            result[f"layer {layer_index + 1} head {head + 1}"] = round(evaluate(silenced, task)["accuracy"], 4)
    return result


def attention_hint_loss(trace, hint: AttentionHint, task, batch) -> torch.Tensor:
    """−log of the attention the hinted head pays from the task's query position to the position
    the task names (see AttentionHint)."""
    weights = trace.encoder_layers[hint.layer].self_attention.weights[:, hint.head, task.it_position]
    wanted = weights[torch.arange(len(weights)), task.referent_positions(batch)]
    return -torch.log(wanted + 1e-6).mean()


def _optimise(spec: ModelSpec, model, task, steps: int, quiet: bool, checkpoint=None) -> tuple[float, float]:
    """AdamW with warm-up and cosine decay, gradients clipped to norm 1, batches drawn from the
    seed + 1.  `checkpoint(step, model)`, if given, is called after every step (it must leave the
    model as it found it).  Returns the mean loss of the last 50 steps and the wall time in seconds."""
    optimiser = torch.optim.AdamW(model.parameters(), lr=spec.learning_rate, weight_decay=0.01)
    generator = torch.Generator().manual_seed(spec.seed + 1)
    started = time.perf_counter()
    recent_losses: list[float] = []
    model.train()
    for step in range(steps):
        for group in optimiser.param_groups:
            group["lr"] = _learning_rate(step, steps, spec.learning_rate)
        batch = task.batch(spec.batch_size, generator)
        hint = spec.attention_hint if spec.attention_hint and step < spec.attention_hint.steps else None
        if hint:
            logits, trace = model(batch.inputs, valid=batch.valid)
        else:
            logits = forward(model, batch)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.targets.flatten(), ignore_index=-100)
        if hint:
            loss = loss + hint.weight * attention_hint_loss(trace, hint, task, batch)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        recent_losses = [*recent_losses, loss.item()][-50:]
        if checkpoint is not None:
            checkpoint(step + 1, model)
        if not quiet:
            _progress(spec.name, step + 1, steps, loss.item(), started)
    return sum(recent_losses) / len(recent_losses), time.perf_counter() - started


def train(spec: ModelSpec, out_dir: Path = PRETRAINED_DIR, steps: int | None = None, quiet: bool = False) -> dict:
    """Train one model from its spec, save weights and card, return the card."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    steps = spec.steps if steps is None else steps
    task = get_task(spec.task)
    config = model_config(spec, task)
    with seeded(spec.seed):
        model = build_model(spec.kind, task, config)
    curve = LearningCurve(task, steps) if isinstance(task, RecallTask) else None
    final_loss, wall_time = _optimise(spec, model, task, steps, quiet, curve)
    wall_time -= curve.seconds if curve else 0.0  # training alone, not the evaluations along the way
    model.eval()
    metrics = evaluate(model, task)

    out_dir.mkdir(parents=True, exist_ok=True)
    weights_path = out_dir / f"{spec.name}.safetensors"
    # Write both files under temporary names and rename them at the end, weights first, so an
    # interrupted run never leaves a card that describes other weights.
    partial_weights = weights_path.with_suffix(".safetensors.partial")
    save_file({k: v.detach().contiguous() for k, v in model.state_dict().items()}, str(partial_weights))
    card = {
        "name": spec.name,
        "task": spec.task,
        "task_description": task.description,
        "kind": spec.kind,
        "config": config,
        "parameters": count_parameters(model),
        "seed": spec.seed,
        "steps": steps,
        "batch_size": spec.batch_size,
        "learning_rate": spec.learning_rate,
        "wall_time_s": round(wall_time, 1),
        "final_loss": round(final_loss, 5),
        "heldout": {"examples": task.eval_size, "seed": task.eval_seed, **metrics},
        "heldout_accuracy": metrics["accuracy"],
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "size_bytes": partial_weights.stat().st_size,
        "sha256": sha256_of(partial_weights),
    }
    if spec.attention_hint:
        card["attention_hint"] = {
            **dataclasses.asdict(spec.attention_hint),
            "about": "for the first `steps` steps, the loss also had `weight` × −log(attention of this head "
                     "(layer, head counted from 0) from the query position to the target position)",
        }
    if task.details():
        card["task_details"] = task.details()
    if curve:
        card["heldout_by_distance"] = recall_bands(model, task)
        card["learning_curve"] = curve.card()
    if isinstance(task, CoreferenceTask):
        with torch.no_grad():
            card["referent_head"] = referent_attention(model, task)
            card["head_ablation"] = head_ablation(model, task)
    partial_card = out_dir / f"{spec.name}.json.partial"
    partial_card.write_text(json.dumps(card, indent=2) + "\n")
    partial_weights.replace(weights_path)
    partial_card.replace(out_dir / f"{spec.name}.json")
    if not quiet:
        print(f"[{spec.name}] held-out accuracy {metrics['accuracy']:.4f} ({metrics['metric']}), "
              f"{wall_time:.0f}s, {card['size_bytes'] / 1e6:.2f} MB", file=sys.stderr, flush=True)
    return card


def _train_by_name(name: str, out_dir: Path = PRETRAINED_DIR) -> dict:
    return train(find_spec(name), out_dir)


def _recall_note(card: dict) -> str:
    """A recall model's line under the table: accuracy by distance, and when training got there."""
    bands = ", ".join(f"{band} {100 * value:.0f} %" for band, value in card["heldout_by_distance"].items())
    gaps = card.get("task_details", {}).get("training_gaps", "uniform")
    gaps = {"log-uniform": "mostly short (log-uniform)",
            "geometric": "short (geometric: 2/3 of gaps 1, 1 in 6561 over 8)"}.get(gaps, gaps)
    note = (f"- `{card['name']}`, trained on {gaps} gaps: held-out accuracy by distance from the key to '?': "
            f"{bands} (chance {100 / len(get_task(card['task']).keys):.1f} %)")
    curve = card.get("learning_curve")
    if curve:
        at = [step for i, step in enumerate(curve["steps"]) if all(v[i] >= 0.95 for v in curve["accuracy"].values())]
        if at:
            note += f"; every range at 95 % or more from step {at[0]} of {card['steps']} (the card's `learning_curve`)"
    return note + "."


def _curves_note(directory: Path) -> str:
    """The shipped training curves (no weights) under the table, if the directory has them."""
    path = directory / CURVES_PATH.name
    if not path.exists():
        return ""
    card = read_curves(path)
    depths = " and ".join(f"{name} ({layers} layers)" for name, layers in card["depths"].items())
    wirings = " and ".join(card["wirings"])
    return (f"\n## Training curves (no weights)\n\n- `{path.name}` (`{card['command']}`): training loss and "
            f"accuracy of a {depths} stack on the {card['task']} task, each {wirings}, {len(card['seeds'])} "
            f"seeds, {card['steps']} steps each; {card['cpu_time_s']:.0f} s of one CPU thread in all. The plain and "
            "residual stacks of He et al. 2016, Fig. 1, trained with this repository's own layers.\n")


def write_model_table(directory: Path = PRETRAINED_DIR) -> Path:
    """pretrained/README.md: one row per card found in the directory."""
    rows, notes = [], []
    for spec in MODEL_SPECS:
        path = directory / f"{spec.name}.json"
        if not path.exists():
            continue
        card = json.loads(path.read_text())
        config = card["config"]
        if card["kind"] == "transformer":
            architecture = (f"{config['architecture']} transformer, {config['n_layers']} layers × "
                            f"{config['n_heads']} heads, d={config['d_model']}")
            encoding = config["encoding"]
        else:
            architecture, encoding = f"{card['kind'].upper()}, hidden {config['hidden_size']}", "(recurrence)"
        rows.append(f"| `{card['name']}` | {card['task']} | {architecture} | {encoding} | {card['parameters']:,} | "
                    f"{100 * card['heldout_accuracy']:.1f} % | {card['size_bytes'] / 1e6:.2f} MB | "
                    f"{card['wall_time_s']:.0f} s |")
        if "heldout_by_distance" in card:
            notes.append(_recall_note(card))
        if "referent_head" in card:
            named = card["referent_head"]
            hint = card.get("attention_hint")
            how = (f" For its first {hint['steps']} of {card['steps']} steps an auxiliary loss (weight "
                   f"{hint['weight']:g}) pulled this head's attention from \"it\" to the referent; the card's "
                   "`head_ablation` gives the accuracy with each head silenced.") if hint else ""
            notes.append(f"- `{card['name']}`: attention from \"it\" in layer {named['layer'] + 1}, head "
                         f"{named['head'] + 1} weighs the right noun above the other in "
                         f"{100 * named['right_noun_above_other']:.1f} % of held-out sentences.{how}")
    text = (
        "# Shipped models\n\n"
        "Generated by `python -m explorer.training.train --all` (this table alone:\n"
        "`python -m explorer.training.train --table`).\n"
        "Accuracy is measured on each task's fixed held-out set; for reverse and sort it counts whole\n"
        "sequences produced by greedy decoding, for the other tasks predicted tokens. Each model's card\n"
        "(`NAME.json`) has the full details and the SHA-256 of its weights.\n\n"
        "| model | task | architecture | encoding | parameters | held-out accuracy | size | training time |\n"
        "|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
        + ("\n" + "\n".join(notes) + "\n" if notes else "")
        + _curves_note(directory)
    )
    out = directory / "README.md"
    out.write_text(text)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m explorer.training.train", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="models to train (see --list)")
    parser.add_argument("--all", action="store_true", help="train every shipped model")
    parser.add_argument("--jobs", type=int, default=2, help="models trained at once with --all (default 2)")
    parser.add_argument("--list", action="store_true", help="list the shipped models and exit")
    parser.add_argument("--table", action="store_true", help="only rewrite pretrained/README.md")
    parser.add_argument("--out", type=Path, default=PRETRAINED_DIR,
                        help="where to write weights, cards and README.md (default: pretrained/)")
    args = parser.parse_args(argv)
    if args.list:
        for spec in MODEL_SPECS:
            print(f"{spec.name:32s} {spec.task:12s} {spec.kind}")
        return 0
    if args.table:
        print(write_model_table(args.out))
        return 0
    names = [spec.name for spec in MODEL_SPECS] if args.all else args.names
    if not names:
        parser.error("name a model, or use --all / --list")
    unknown = [n for n in names if n not in {s.name for s in MODEL_SPECS}]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; see --list")
    started = time.perf_counter()
    # Ctrl-C or a kill of this process must also stop the workers (the pool's exit terminates them).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if len(names) > 1 and args.jobs > 1:
        # Longest first so the workers finish together; steps × sequence length estimates the cost
        # (the recall models, 129 tokens long, take the most time).
        names.sort(key=lambda n: -find_spec(n).steps * get_task(find_spec(n).task).max_len)
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            pool.map(functools.partial(_train_by_name, out_dir=args.out), names, chunksize=1)
    else:
        for name in names:
            _train_by_name(name, args.out)
    write_model_table(args.out)
    print(f"trained {len(names)} model(s) in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
