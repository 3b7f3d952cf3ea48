"""Plain against residual stacks, trained:  python -m explorer.training.stacks [--out FILE] [--quiet]

He et al. (2016, "Deep Residual Learning for Image Recognition", Fig. 1), the lecture notes' CIFAR
figure: a deeper *plain* network ends with a higher *training* error than a shallower one, and
residual connections close the gap.  This command makes the same comparison with this repository's
own transformer: a shallow and a deep stack of layers, each plain (`residual=False`) and residual
(`residual=True`), everything else equal (width, heads, LayerNorm, optimiser, steps and the very
batches), for a few seeds, and writes the training curves (loss and accuracy on the training
batches, averaged over every `RECORD_EVERY` steps) to pretrained/stacks-training-curves.json with a
card that says how they were made.  No weights are kept: the curves are the result.

Like explorer/training/train.py: one CPU thread, fixed seeds, deterministic algorithms, so the same
machine reproduces the same numbers; the app never runs this (it reads the file,
explorer/analysis/stacks.py).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

import torch
from torch.nn import functional as F

from ..model.building import seeded
from ..model.parameters import count_parameters
from ..model.transformer import Transformer, TransformerConfig
from .curves import COMMAND, CURVES_PATH, StackCurvesError, read_curves
from .tasks import get_task
from .train import _learning_rate, write_model_table

__all__ = [
    "COMMAND",
    "CURVES_PATH",
    "DEPTHS",
    "SEEDS",
    "WIRINGS",
    "StackCurvesError",
    "main",
    "read_curves",
    "stack_config",
    "train_stack",
    "train_stacks",
]

TASK = "induction"
DEPTHS = {"shallow": 2, "deep": 8}  # layers
WIRINGS = {"plain": False, "residual": True}  # the value of `residual`
SEEDS = (0, 1, 2)
D_MODEL, N_HEADS = 32, 2
NORM = "pre"  # LayerNorm before each sub-layer (and one after the last layer), as the shipped models
STEPS, BATCH_SIZE, LEARNING_RATE = 600, 32, 2e-3
RECORD_EVERY = 10  # steps averaged into one recorded point
BATCH_SEED_OFFSET = 1000  # the batches of seed s come from a generator seeded 1000 + s
NORMALISATION_NOTE = (
    "LayerNorm (before each sub-layer, and once after the last layer: norm='pre', as the shipped models), in "
    "every stack, plain or residual. He et al. used BatchNorm after each convolution; LayerNorm is what "
    "transformers use (it normalises each token over its own features, so it needs no batch statistics). "
    "Either way the plain stacks are normalised too: what differs is only the residual connection."
)


def stack_config(n_layers: int, residual: bool) -> TransformerConfig:
    """The model of one cell: the task's decoder with n_layers layers, with or without residual connections."""
    task = get_task(TASK)
    return TransformerConfig(vocab_size=task.vocab_size, d_model=D_MODEL, n_heads=N_HEADS, n_layers=n_layers,
                             architecture=task.architecture, norm=NORM, residual=residual, max_len=task.max_len)


def train_stack(n_layers: int, residual: bool, seed: int, *, steps: int | None = None, stop_after: int | None = None,
                every: int = RECORD_EVERY) -> dict:
    """Train one stack for `steps` steps (default STEPS; AdamW, warm-up then cosine decay over `steps`, gradients
    clipped to norm 1) on the batches of `seed`, the weights drawn from `seed`.  `stop_after` ends the
    run early on the same schedule (the tests replay the first points).  Returns the mean training
    loss and accuracy (at the scored positions) over each `every` steps, and the wall time."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    steps = STEPS if steps is None else steps
    task = get_task(TASK)
    with seeded(seed):
        model = Transformer(stack_config(n_layers, residual))
    optimiser = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.01, foreach=True)
    generator = torch.Generator().manual_seed(BATCH_SEED_OFFSET + seed)
    losses, accuracies, window_loss, window_right, window_scored = [], [], 0.0, 0, 0
    started, cpu_started = time.perf_counter(), time.process_time()
    model.train()
    for step in range(steps if stop_after is None else min(steps, stop_after)):
        for group in optimiser.param_groups:
            group["lr"] = _learning_rate(step, steps, LEARNING_RATE)
        batch = task.batch(BATCH_SIZE, generator)
        logits, _ = model(batch.inputs, valid=batch.valid)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.targets.flatten(), ignore_index=-100)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        scored = batch.targets != -100
        window_loss += loss.item()
        window_right += int((logits.argmax(-1)[scored] == batch.targets[scored]).sum())
        window_scored += int(scored.sum())
        if (step + 1) % every == 0:
            losses.append(round(window_loss / every, 6))
            accuracies.append(round(window_right / window_scored, 6))
            window_loss, window_right, window_scored = 0.0, 0, 0
    return {"loss": losses, "accuracy": accuracies, "wall_time_s": round(time.perf_counter() - started, 2),
            "cpu_time_s": round(time.process_time() - cpu_started, 2), "parameters": count_parameters(model)}


def _card(runs: list[dict], wall_time: float, cpu_time: float) -> dict:
    task = get_task(TASK)
    return {
        "name": "stacks-training-curves",
        "about": ("Training curves of a shallow and a deep stack of transformer layers, each plain (no residual "
                  "connections) and residual, everything else equal: the trained counterpart of He et al. 2016, "
                  "Fig. 1 (a deeper plain network has a higher training error; residual connections fix it)."),
        "command": COMMAND,
        "task": TASK,
        "task_description": task.description,
        "loss_scored_on": "next-token cross-entropy where the next token is predictable (the repeated half)",
        "uniform_guess_loss": round(math.log(task.n_symbols), 6),
        "uniform_guess_about": (f"ln {task.n_symbols}: the loss of a model that gives each of the "
                                f"{task.n_symbols} symbols the same probability whatever it reads"),
        "model": {**stack_config(DEPTHS["shallow"], True).to_dict(), "n_layers": DEPTHS, "residual": WIRINGS},
        "normalisation": NORMALISATION_NOTE,
        "depths": DEPTHS,
        "wirings": WIRINGS,
        "seeds": list(SEEDS),
        "seeds_about": (f"seed s draws the weights (from s) and the batches (from {BATCH_SEED_OFFSET} + s): "
                        "every cell of a seed trains on the same batches"),
        "optimiser": {"name": "AdamW", "learning_rate": LEARNING_RATE, "weight_decay": 0.01,
                      "schedule": "linear warm-up over the first 5 % of steps, then cosine decay to zero",
                      "gradient_clipping": 1.0},
        "steps": STEPS,
        "batch_size": BATCH_SIZE,
        "record_every": RECORD_EVERY,
        "recorded_at_steps": list(range(RECORD_EVERY, STEPS + 1, RECORD_EVERY)),
        "recorded": f"mean training loss and accuracy over the {RECORD_EVERY} steps up to each recorded step",
        "runs": runs,
        "threads": 1,
        "wall_time_s": round(wall_time, 1),
        "cpu_time_s": round(cpu_time, 1),
        "budget": "at most 6 minutes of one CPU thread for all runs together",
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
    }


def train_stacks(quiet: bool = False) -> dict:
    """Every cell (depth × wiring × seed), one after another on one thread; returns the card."""
    started, cpu_started, runs = time.perf_counter(), time.process_time(), []
    for seed in SEEDS:
        for depth, n_layers in DEPTHS.items():
            for wiring, residual in WIRINGS.items():
                run = train_stack(n_layers, residual, seed)
                runs.append({"depth": depth, "wiring": wiring, "seed": seed, **run})
                if not quiet:
                    print(f"[stacks] seed {seed} {depth} ({n_layers} layers) {wiring}: last loss "
                          f"{run['loss'][-1]:.4f}, accuracy {run['accuracy'][-1]:.3f}, {run['wall_time_s']:.0f}s",
                          file=sys.stderr, flush=True)
    return _card(runs, time.perf_counter() - started, time.process_time() - cpu_started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CURVES_PATH,
                        help="where to write the curves (default pretrained/stacks-training-curves.json)")
    parser.add_argument("--quiet", action="store_true", help="print nothing while training")
    args = parser.parse_args(argv)
    card = train_stacks(args.quiet)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    partial = args.out.with_suffix(".json.partial")
    partial.write_text(json.dumps(card, indent=1) + "\n")
    partial.replace(args.out)
    if args.out == CURVES_PATH:
        write_model_table()  # pretrained/README.md names the curves and their cost
    print(f"[stacks] wrote {args.out} in {card['wall_time_s']:.0f}s ({card['cpu_time_s']:.0f}s of CPU)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
