"""The block lesson, declared: its settings (the controls: the sentence, the stage of the block, the
token followed, the layer and head) and its view (settings → one forward pass of the shipped
coreference encoder, read from the model's own trace by explorer.analysis.block_trace, with the
parameters counted on the model's modules).  The runtime (explorer/serve) caches the view;
block.py draws it, figures.py makes its figures, claims.py says what its sentences state."""

from __future__ import annotations

import json
import types
from dataclasses import dataclass

import numpy as np

from explorer.analysis.block import BlockTrace, block_trace, model_tokens
from explorer.kit.settings import setting
from explorer.training.minilm import MODEL_DIR as MINILM_DIR
from explorer.training.pretrained import PretrainedModelError, find_spec, load_model

__all__ = ["MODEL", "PRESETS", "STAGES", "STAGE_KEYS", "BlockSettings", "BlockView", "block_view", "sentence_problem",
           "token_labels"]

MODEL = "coreference-sinusoidal-h4-l2"  # an encoder on words, trained to name what "it" refers to
MAX_CHARS = 200
PRESETS = {
    "too tired": "the animal didn't cross the street because it was too tired",
    "too wide": "the animal didn't cross the street because it was too wide",
    "too slow": "the dog didn't catch the cat because it was too slow",
    "too fast": "the dog didn't catch the cat because it was too fast",
}
DEFAULT_SENTENCE = PRESETS["too tired"]

# The stages of the diagram, top to bottom: (key, label).  The keys inside a layer name the trace's
# tensors of the chosen layer (explorer/analysis/block.py); "qkv" shows q, k and v of the chosen head.
EMBEDDING = (("embed", "Token embedding"), ("input", "+ position"))
LAYER = (("attn_norm", "LayerNorm (attn)"), ("qkv", "Q, K, V per head"), ("scores", "Scores q·k / √d_head"),
         ("weights", "Softmax: weights"), ("heads_out", "Weighted sum of V"), ("concat", "Concatenate heads"),
         ("attn_out", "× W_O"), ("attn_residual", "Add: x + attention"), ("ffn_norm", "LayerNorm (FFN)"),
         ("ffn_hidden", "FFN: d → 4d, ReLU"), ("ffn_out", "FFN: 4d → d"), ("ffn_residual", "Add: x + FFN"))
OUTPUT = (("final_norm", "LayerNorm (final)"), ("logits", "Linear: a score per word"),
          ("probabilities", "Softmax: P(word)"))
STAGES = types.MappingProxyType(dict(EMBEDDING + LAYER + OUTPUT))
STAGE_KEYS = types.MappingProxyType({label: key for key, label in STAGES.items()})  # the control shows the labels
IN_LAYER = frozenset(key for key, _ in LAYER)


def sentence_problem(settings) -> str | None:
    """Why the typed sentence cannot be read by the model (words it does not know, too long, empty): the
    message saying so, the default sentence shown instead; None where it is read."""
    try:
        task = load_model(MODEL).task
    except PretrainedModelError:
        return None  # the view says the model could not be loaded, and how to regenerate it
    try:
        model_tokens(task, settings.sentence)
    except ValueError as problem:
        what = str(problem).split(".  It knows only")[0].split(": give the model")[0]
        known = [w for w in task.vocab if not w.startswith("<")]
        return (f"{what}. The model knows {len(known)} words, among them {', '.join(known[:14])} …  "
                f"Showing “{DEFAULT_SENTENCE}” instead.")
    return None


def _tokens(settings) -> tuple[str, ...]:
    text = DEFAULT_SENTENCE if sentence_problem(settings) else settings.sentence
    try:
        return model_tokens(load_model(MODEL).task, text)
    except PretrainedModelError:  # the controls still draw; the view reports the damaged model
        return tuple(DEFAULT_SENTENCE.split())


def token_labels(tokens) -> tuple[str, ...]:
    """Each token's name in the Token control: the word, with its place where the word occurs twice
    ("the (1st)", "the (2nd)")."""
    ordinal = {1: "1st", 2: "2nd", 3: "3rd"}
    labels, seen = [], {}
    for token in tokens:
        seen[token] = seen.get(token, 0) + 1
        place = ordinal.get(seen[token], f"{seen[token]}th")
        labels.append(token if tokens.count(token) == 1 else f"{token} ({place})")
    return tuple(labels)


def _token_options(settings) -> tuple[str, ...]:
    return token_labels(_tokens(settings))


def _default_token(settings) -> str:
    labels = _token_options(settings)
    return "it" if "it" in labels else labels[0]


def _n_layers() -> int:
    return find_spec(MODEL).n_layers  # the shipped model's shape, known without loading its weights


def _n_heads() -> int:
    return find_spec(MODEL).n_heads


@dataclass(frozen=True)
class BlockSettings:
    """The lesson's controls: the stage and the token in the page, above the figure; the rest in the sidebar."""

    sentence: str = setting(DEFAULT_SENTENCE, "Sentence", url="sentence", max_chars=MAX_CHARS, presets=PRESETS,
                            text_url="text", text_label="Your sentence",
                            help="Words the coreference model knows (the lecture's “animal … street … it” "
                                 "sentences and their kind); at most 12.")
    stage: str = setting(STAGES["embed"], "Stage", url="stage", options=tuple(STAGE_KEYS), widget="selectbox",
                         main=True, help="Where in the forward pass to look.")
    token: str = setting("it", "Token", url="token", options=_token_options, default_from=_default_token,
                         widget="selectbox", main=True, help="The token whose row is framed and followed.")
    layer: int = setting(1, "Layer", url="layer", options=lambda s: tuple(range(1, _n_layers() + 1)),
                         widget="select_slider", help="The layer whose block the diagram's middle part shows.")
    head: int = setting(1, "Head", url="head", options=lambda s: tuple(range(1, _n_heads() + 1)),
                        widget="select_slider", help="The head shown at the stages inside attention.")

    @property
    def part(self) -> str:
        """The stage's key ("embed", "qkv", … : STAGES)."""
        return STAGE_KEYS[self.stage]


@dataclass(frozen=True)
class BlockView:
    """One forward pass of the model over the sentence, and what the page reads from it."""

    settings: BlockSettings
    trace: BlockTrace
    labels: tuple[str, ...]  # the Token control's names of the tokens
    row: int  # the followed token's position
    vocab: tuple[str, ...]
    config: types.SimpleNamespace  # d_model, n_heads, head_dim, d_ff, n_layers, vocab_size, activation, scale
    parameters: types.MappingProxyType  # counted on the modules of one layer and of the whole model
    minilm: types.MappingProxyType  # MiniLM's embedding table size, from its config.json
    hint: types.MappingProxyType | None  # the card's attention_hint: a head also trained to look at the referent

    def tensor(self, name: str) -> np.ndarray:
        """A trace tensor of the chosen layer ("q", "attn_out", …) or of the whole model ("input", "logits")."""
        return self.trace[f"layers.{self.settings.layer - 1}.{name}" if name in IN_LAYER | {"q", "k", "v"} else name]


def _parameters(model) -> dict[str, int]:
    """Parameters counted on the model's own modules (every layer has the same shape)."""
    def count(module) -> int:
        return sum(p.numel() for p in module.parameters())

    layer = model.encoder.layers[0]
    return {"attention": count(layer.self_attn), "ffn": count(layer.ffn),
            "norms": count(layer.attn_norm) + count(layer.ffn_norm), "layer": count(layer),
            "q_proj": count(layer.self_attn.q_proj),
            "embedding": count(model.encoder.embed), "total": count(model)}


def _minilm() -> dict[str, int]:
    config = json.loads((MINILM_DIR / "config.json").read_text(encoding="utf-8"))
    return {"vocab": int(config["vocab_size"]), "d": int(config["hidden_size"])}


def block_view(settings: BlockSettings) -> BlockView:
    """The trace of the sentence (the default one where the typed one cannot be read: `sentence_problem`)."""
    loaded = load_model(MODEL)
    text = DEFAULT_SENTENCE if sentence_problem(settings) else settings.sentence
    trace = block_trace(MODEL, text)
    labels = token_labels(trace.tokens)
    row = labels.index(settings.token if settings.token in labels else "it" if "it" in labels else labels[0])
    c = loaded.model.config
    config = types.SimpleNamespace(d_model=c.d_model, n_heads=c.n_heads, head_dim=c.d_model // c.n_heads,
                                   d_ff=trace["layers.0.ffn_hidden"].shape[-1], n_layers=c.n_layers,
                                   vocab_size=c.vocab_size, activation=c.activation,
                                   scale=float(np.sqrt(c.d_model)) if c.scale_embeddings else 1.0)
    return BlockView(settings, trace, labels, row, tuple(loaded.task.vocab), config,
                     types.MappingProxyType(_parameters(loaded.model)), types.MappingProxyType(_minilm()),
                     types.MappingProxyType(dict(loaded.card["attention_hint"]))
                     if loaded.card.get("attention_hint") else None)
