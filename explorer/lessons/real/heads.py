"""What the real-model page shows, computed and cached (no Streamlit): all-MiniLM-L6-v2's attention
for a sentence, the lecture's "tired / wide" pair and its difference, the measured behaviour of its
heads at "it", and its learned position table beside the sinusoidal one.

The model is loaded once per process (explorer.training.minilm) and shared; the arrays handed out
here are read-only.  A missing or damaged package raises MiniLMError, which the page shows."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from explorer.analysis.referent import REFERENT_FILE
from explorer.caching import bounded_cache, loaded
from explorer.model.positional import sinusoidal_encoding
from explorer.training.minilm import MiniLMError, load_minilm, minilm_positions

__all__ = [
    "MAX_CHARS",
    "PAGE_MAX_TOKENS",
    "PAIR",
    "PRESETS",
    "MiniLMError",
    "RealView",
    "ReferentHeads",
    "model_facts",
    "pair_views",
    "position_tables",
    "real_view",
    "referent_heads",
    "token_lengths",
]

PAGE_MAX_TOKENS = 32  # word pieces drawn, [CLS] and [SEP] included: beyond that no grid reads well
MAX_CHARS = 300
PAIR = ("The animal didn't cross the street because it was too tired.",
        "The animal didn't cross the street because it was too wide.")
# The page's example sentences by short name (the name is what a link carries: ?sentence=too+wide).
PRESETS = {
    "too tired": PAIR[0],
    "too wide": PAIR[1],
    "trophy and suitcase": "The trophy didn't fit into the suitcase because it was too big.",
    "dog and cat": "The dog didn't catch the cat because it was too slow.",
    "unusual words": "A robot 🤖 ordered crème brûlée at the café in Zürich for 12.50 euros.",
    "word pieces": "Unbelievably, the transformers outperformed the recurrent networks.",
}


@dataclass(frozen=True)
class RealView:
    """One text as the model read it: word pieces, attention (layers, heads, T, T), what was cut."""

    text: str
    tokens: tuple[str, ...]
    weights: np.ndarray  # float32, read-only
    cut: int  # word pieces dropped from the end (beyond PAGE_MAX_TOKENS)

    def index(self, token: str) -> int | None:
        """The position of the first piece equal to `token` (lower case), or None."""
        return self.tokens.index(token) if token in self.tokens else None


def real_view(text: str, max_tokens: int = PAGE_MAX_TOKENS) -> RealView:
    """The model's attention for `text`, cut to MAX_CHARS characters and max_tokens pieces (cached)."""
    return _real_view(text[:MAX_CHARS], max_tokens)


@bounded_cache(48, max_bytes=16_000_000)  # ≤ 6 × 12 × 32 × 32 × 4 bytes = 295 KB each
def _real_view(text: str, max_tokens: int) -> RealView:
    encoded, weights, _ = load_minilm().trace(text, max_tokens)
    weights.setflags(write=False)
    return RealView(text, tuple(encoded.tokens), weights, encoded.cut)


def pair_views(first: str = PAIR[0], second: str = PAIR[1]) -> tuple[RealView, RealView]:
    """Both sentences' views; the lecture's pair by default (the same number of word pieces)."""
    return real_view(first), real_view(second)


@dataclass(frozen=True)
class ReferentHeads:
    """The shipped measurement of the heads at "it" (explorer.analysis.referent), as arrays."""

    overall: np.ndarray  # (layers, heads): share of sentences where "it" weighs the right noun more
    when_subject: np.ndarray
    when_object: np.ndarray
    best: tuple[dict, ...]
    sentences: int
    seed: int
    regenerate: str


@loaded(1)
def referent_heads() -> ReferentHeads:
    """pretrained/minilm-referent-heads.json, checked for shape; MiniLMError if it is missing or broken."""
    try:
        data = json.loads(REFERENT_FILE.read_text())
        arrays = [np.array(data[key], dtype=np.float64) for key in
                  ("right_above_other", "right_above_other_when_subject", "right_above_other_when_object")]
        if any(a.shape != (6, 12) or not np.all((a >= 0) & (a <= 1)) for a in arrays):
            raise ValueError("the scores are not 6 × 12 shares")
        for array in arrays:
            array.setflags(write=False)
        return ReferentHeads(*arrays, tuple(data["best_heads"]), int(data["sentences"]), int(data["seed"]),
                             data["regenerate"])
    except (OSError, ValueError, KeyError, TypeError) as problem:
        raise MiniLMError(f"{REFERENT_FILE.name}: cannot be read ({type(problem).__name__}: {problem}). "
                          "Regenerate it with: .venv/bin/python -m explorer.analysis.referent") from None


def model_facts() -> dict:
    """Numbers for the page's caption: parameters, load time, where the files are."""
    model = load_minilm()
    c = model.config
    return {"parameters": model.parameters, "load_seconds": model.load_seconds, "model_dir": str(model.model_dir),
            "layers": c.n_layers, "heads": c.n_heads, "d_model": c.d_model, "d_ff": c.ff_dim,
            "positions": c.max_len, "vocabulary": c.vocab_size}




@loaded(1)
def token_lengths() -> np.ndarray:
    """The length of every row of MiniLM's token-embedding table (float64, read-only): what its position
    vectors are added to, unscaled."""
    table = load_minilm().encoder.embed.weight.detach().double().numpy()
    lengths = np.linalg.norm(table, axis=1)
    lengths.setflags(write=False)
    return lengths


@loaded(1)
def position_tables() -> tuple[np.ndarray, np.ndarray, float]:
    """(MiniLM's learned position table, the sinusoidal table of the same size, the learned table's
    colour bound; see minilm_positions), read-only."""
    learned, clip = minilm_positions()
    sinusoidal = sinusoidal_encoding(*learned.shape)
    sinusoidal.setflags(write=False)
    return learned, sinusoidal, clip
