"""The block lesson's "Claims, measured" box (explorer/kit/measured.py): where the notes slip on this material,
measured on the shipped models' own tables."""

from __future__ import annotations

from explorer.analysis.block import traceable_models
from explorer.analysis.embeddings import token_embeddings
from explorer.caching import bounded_cache
from explorer.kit.measured import Measured
from explorer.training.pretrained import read_card

__all__ = ["embedding_box"]


@bounded_cache(1, max_bytes=100_000)
def embedding_box() -> Measured:
    """Is an embedding shorter than a one-hot vector?  Each shipped one-stack model's table (its shape, as its
    card gives it), and MiniLM's (the loaded table)."""
    rows, shorter = [], []
    for name in traceable_models():
        config = read_card(name)["config"]  # the table's shape, from the card (the weights stay unloaded)
        entries, d = int(config["vocab_size"]), int(config["d_model"])
        rows.append((name, f"{entries:,}", str(d), "yes" if d < entries else "no"))
        shorter.append(d < entries)
    entries, d = token_embeddings().shape
    rows.append(("all-MiniLM-L6-v2", f"{entries:,}", str(d), f"yes, {entries / d:.0f} × shorter"))
    toy_not = sum(not s for s in shorter)
    some = "All" if toy_not == len(shorter) else f"{toy_not} of the"
    finding = (f"{some} {len(shorter)} shipped toy models have rows at least as long as their one-hot vectors, and "
               f"MiniLM's are {entries / d:.0f} times shorter: shortness comes with a large vocabulary, it is not what "
               "makes an embedding. What does is that the row is dense and learned, so that tokens used alike end up "
               "with rows pointing alike (the section on MiniLM's table below), which a one-hot vector, every pair at "
               "the same distance, can never do.") if toy_not else (
               "Every table here is shorter than its one-hot vectors.")
    return Measured(title="Is an embedding shorter than one-hot?",
                    notes_say="“an embedding is an encoding of a categorical value that is shorter than OHE”.",
                    columns=("model", "vocabulary entries (one-hot length)", "embedding length", "shorter?"),
                    rows=tuple(rows), finding=finding)
