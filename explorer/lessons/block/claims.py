"""What the block lesson's sentences state about the forward pass shown (explorer/kit/claims.py): every
number is read from the view (the model's own trace, its modules' parameters), and each sentence is
shown only where its predicate holds for the sentence, token, layer and head on screen."""

from __future__ import annotations

import types

import numpy as np

from explorer.kit.claims import Claim

__all__ = ["BLOCK_CLAIMS", "block_facts"]


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _twice(tokens) -> tuple[str, int, int] | None:
    """The first word that occurs twice, and its two positions."""
    for i, token in enumerate(tokens):
        if token in tokens[i + 1:]:
            return token, i, tokens.index(token, i + 1)
    return None


def block_facts(shown) -> dict:
    """Every number the lesson's sentences quote, read from the view shown."""
    view, settings = shown.view, shown.settings
    trace, c, row, p = view.trace, view.config, view.row, view.parameters
    word = trace.tokens[row]
    facts = {"d": c.d_model, "vocab": c.vocab_size, "heads": c.n_heads, "head_dim": c.head_dim, "d_ff": c.d_ff,
             "scale": c.scale, "word": word, "id": trace.ids[row], "T": len(trace.tokens),
             "layer": settings.layer, "head": settings.head, "minilm_vocab": view.minilm["vocab"],
             "minilm_d": view.minilm["d"], "proj": p["q_proj"], "attn": p["attention"], "ffn": p["ffn"],
             "norms": p["norms"], "ffn_share": p["ffn"] / (p["attention"] + p["ffn"]),
             "ffn_factor": c.d_ff / c.d_model, "pre_norm": trace.norm == "pre",
             "words": sum(not w.startswith("<") for w in view.vocab),
             "markers": sum(w.startswith("<") for w in view.vocab)}
    twice = _twice(trace.tokens)
    if twice is not None:
        repeated, i, j = twice
        positions = np.linalg.norm(np.asarray(trace["position_embedding"], np.float64), axis=1)
        facts.update(repeated=repeated, embed_cos=_cosine(trace["token_embedding"][i], trace["token_embedding"][j]),
                     input_cos=_cosine(trace["input"][i], trace["input"][j]),
                     word_norm=float(np.linalg.norm(trace["token_embedding"][i])), pos_norm=float(positions.mean()),
                     pos_spread=float(np.ptp(positions)), half_d=c.d_model // 2)
    hint = view.hint  # the head the training loss also steered (the model card's attention_hint), if any
    facts["steered"] = (
        f" This head was steered there: for its first {hint['steps']} training steps the loss had an extra term, "
        f"weighted {hint['weight']:g}, rewarding its weight from “it” on the right noun (the model card's "
        "attention_hint)."
        if hint and (hint["layer"], hint["head"]) == (settings.layer - 1, settings.head - 1) and word == "it" else "")
    weights = view.tensor("weights")[settings.head - 1, row]  # (T,) the token's row in the chosen head
    order = np.argsort(-weights, kind="stable")
    facts.update(top_key=trace.tokens[order[0]], top_weight=float(weights[order[0]]),
                 second_key=trace.tokens[order[1]], second_weight=float(weights[order[1]]),
                 weight_sum=float(weights.sum()))
    x = view.tensor("attn_residual")[row] - view.tensor("attn_out")[row]  # what entered the layer (pre-norm: its input)
    added = view.tensor("attn_out")[row]
    facts.update(x_norm=float(np.linalg.norm(x)), added_norm=float(np.linalg.norm(added)),
                 added_share=float(np.linalg.norm(added) / np.linalg.norm(x)))
    normed = view.tensor("attn_norm")[row]
    facts.update(x_mean=float(np.mean(x)), x_std=float(np.std(x)), normed_std=float(np.std(normed)))
    hidden = view.tensor("ffn_hidden")[row]
    facts.update(zeros=int(np.count_nonzero(hidden == 0)), zero_share=float(np.mean(hidden == 0)),
                 relu=c.activation == "relu")
    probabilities = trace["probabilities"][row]
    best = int(np.argmax(probabilities))
    facts.update(answer=view.vocab[best], answer_p=float(probabilities[best]),
                 answer_in_sentence=view.vocab[best] in trace.tokens and view.vocab[best] != word)
    return facts


def _holds(test):
    return Claim(lambda shown: bool(test(block_facts(shown))), block_facts)


BLOCK_CLAIMS = types.MappingProxyType({
    # the embedding is a row of the table, here no shorter than a one-hot vector (d ≥ vocabulary)
    "embedding_row": _holds(lambda f: f["d"] >= f["vocab"] and f["minilm_d"] < f["minilm_vocab"] and f["markers"] == 1),
    # the same word twice: equal rows in the table, nearly equal once the position is added: every position's
    # row is short (√(d/2): d/2 sine–cosine pairs) beside the word's row scaled by √d
    "position_added": _holds(lambda f: "repeated" in f and f["embed_cos"] > 0.9999 and f["input_cos"] < 1 - 1e-6
                             and f["pos_spread"] < 1e-3 and abs(f["pos_norm"] ** 2 - f["half_d"]) < 1e-2
                             and f["pos_norm"] < f["word_norm"] / 5),
    # the d features are cut into h chunks of d / h, one per head
    "heads_split": _holds(lambda f: f["heads"] * f["head_dim"] == f["d"]),
    # the head puts most of the token's weight on one other word
    "one_key": _holds(lambda f: f["top_weight"] > 0.9 and f["top_key"] != f["word"]
                      and abs(f["weight_sum"] - 1) < 1e-4),
    # the heads' outputs side by side are one row of d, and W_O keeps it d wide
    "concat": _holds(lambda f: f["heads"] * f["head_dim"] == f["d"]),
    # attention adds a correction smaller than what was there; pre-norm: a LayerNorm before each sublayer
    "residual_small": _holds(lambda f: f["added_share"] < 1 and f["pre_norm"]),
    # two thirds of the block's weights are the FFN's; ReLU zeroes a part of the hidden units
    "ffn_share": _holds(lambda f: 0.6 < f["ffn_share"] < 0.7 and f["relu"] and 0 < f["zeros"] < f["d_ff"]),
    # at the token, the model names another word of the sentence with most of the probability
    "output": _holds(lambda f: f["answer_in_sentence"] and f["answer_p"] > 0.5),
})
