"""What the decoder lesson's steps say after Reveal, as claims (explorer/kit/claims.py): each step of
explorer/lessons/decoder/lesson.toml names one; its check reads the view the step shows (the stepping
figure and the forcing section: DecoderView; the KV-cache counts: CacheView; the architectures'
parameter counts: ArchitectureView) and its values are the numbers and tokens the answer quotes.
`s` is what is shown: `s.settings`, `s.view`.  No Streamlit.
"""

from __future__ import annotations

import types

import numpy as np

from explorer.caching import loaded
from explorer.kit.claims import Claim, spelled
from explorer.lessons.decoder.models import DECODER_MODELS
from explorer.lessons.decoder.view import count_claim, mistake_effect
from explorer.model.parameters import count_parameters
from explorer.training.pretrained import PretrainedModelError, load_model

__all__ = ["ARCHITECTURE_CLAIMS", "CACHE_CLAIMS", "DECODER_CLAIMS", "PAPER_BASE_MILLIONS", "one_table"]

NEAR_ZERO = 0.05  # a loss this small "stays near zero" (p(right token) above 0.95)




def _words(tokens, last: str = " and ") -> str:
    tokens = list(tokens)
    return tokens[0] if len(tokens) == 1 else ", ".join(tokens[:-1]) + last + tokens[-1]


# --- the stepping view and the forcing section (DecoderView) ---------------------------------------------


def _ran(s) -> bool:
    return s.view.run is not None


def _cross_row(s) -> np.ndarray:
    return s.view.cross_shown[s.view.step]


def _who(s) -> str:
    layer, head = s.settings.layer, s.settings.head
    return f"layer {layer}'s heads give" if head == "mean" else f"head {head} of layer {layer} gives"


def _first_reads_last(s) -> bool:
    """First step of an encoder–decoder reversal: cross-attention weighs the last source letter most,
    and the model writes it."""
    if not _ran(s) or s.settings.task != "reverse" or s.view.step != 0 or s.view.cross_shown is None:
        return False
    last = s.view.example.tokens[-1]
    return int(_cross_row(s).argmax()) == len(s.view.example.tokens) - 1 and s.view.run.written[0] == last \
        and s.settings.put_in is None


def _first(s) -> dict:
    run, letter = s.view.run, s.view.example.tokens[-1]
    return {"letter": letter, "who": _who(s), "their": "their" if s.settings.head == "mean" else "its",
            "on_average": " on average" if s.settings.head == "mean" else "",
            "weight": float(_cross_row(s).max()), "p": float(run.probs[0, run.vocab.index(letter)])}


def _last_step(s) -> bool:
    """The shown step writes the end token, with no mistake put in, and its row reads every key so far."""
    view = s.view
    if not _ran(s) or view.example.start is None or s.settings.put_in is not None:
        return False
    k = view.step
    return view.run.written[k] == "</s>" and int(np.isfinite(view.self_shown[k]).sum()) == k + 1


def _keys(s) -> dict:
    k, written = s.view.step, s.view.run.written
    return {"keys": spelled(k + 1).capitalize(), "letters": spelled(k), "written": " ".join(written[:k]),
            "prefix": " ".join(("<s>", *written[:k]))}


def _sorts_by_content(s) -> bool:
    """Sorting: cross-attention's brightest source letter is the one the step writes (and the right one),
    and its second brightest is the letter that comes after it in sorted order."""
    view = s.view
    if not _ran(s) or s.settings.task != "sort" or view.cross_shown is None or view.example.expected is None:
        return False
    k, right, source = view.step, view.example.expected, view.example.tokens
    if k + 1 >= len(right) - 1 or view.run.written[k] != right[k] or s.settings.put_in is not None:
        return False
    order = np.argsort(-_cross_row(s), kind="stable")
    return source[order[0]] == right[k] and source[order[1]] == right[k + 1]


def _content(s) -> dict:
    k, source, row = s.view.step, s.view.example.tokens, _cross_row(s)
    order = np.argsort(-row, kind="stable")
    where = {0: "at the start of the source", len(source) - 1: "at the end of the source"}.get(
        int(order[0]), "in the middle of the source")
    return {"letter": source[order[0]], "where": where, "weight": float(row[order[0]]),
            "second": float(row[order[1]]), "next": source[order[1]], "step": k + 1}


def _effect(s) -> dict | None:
    return mistake_effect(s.view) if _ran(s) else None


def _free_behind(s) -> bool:
    """After the mistake, free running gets every later token wrong, each the right token of one step
    before (one step behind), while teacher forcing gets them all right with its loss near zero."""
    effect = _effect(s)
    if effect is None or effect["later"] < 2 or s.view.forced is None:
        return False
    k, right, free = s.settings.put_in, s.view.example.expected, s.view.run
    return (effect["free_wrong"] == effect["later"] and effect["forced_wrong"] == 0
            and free.written[k + 1:] == right[k:-1] and float(np.max(s.view.forced.losses[k + 1:])) < NEAR_ZERO)


def _behind(s) -> dict:
    effect, k, free = _effect(s), s.settings.put_in, s.view.run
    losses = np.asarray(free.losses[k + 1:])
    return {"all": spelled(effect["later"]), "written": effect["written"], "after": " ".join(free.written[k + 1:]),
            "low": float(losses.min()), "high": float(losses.max())}


def _copies_after_wrong(s) -> bool:
    """Induction: after the mistake, each token free running writes is the one that followed the
    previous token's first occurrence in the prompt, the wrong token is the repeat's first (so it goes
    back to the start), every later token is wrong, and teacher forcing gets them all right."""
    effect = _effect(s)
    if effect is None or s.settings.task != "induction" or effect["later"] < 1 or s.view.forced is None:
        return False
    prompt, k, free = s.view.example.tokens, s.settings.put_in, s.view.run
    follows = all(t in prompt[:-1] and prompt[prompt.index(t) + 1] == n
                  for t, n in zip(free.written[k:-1], free.written[k + 1:], strict=True))
    return (follows and effect["written"] == prompt[0] and effect["free_wrong"] == effect["later"]
            and effect["forced_wrong"] == 0)


def _copies(s) -> dict:
    effect, k = _effect(s), s.settings.put_in
    later = effect["later"]
    return {"after": _words(s.view.run.written[k + 1:], " and then "), "written": effect["written"],
            "right": effect["right"], "forced": _words(s.view.forced.greedy[k + 1:]),
            "wrong": "both" if later == 2 else "the" if later == 1 else f"all {spelled(later)}",
            "steps": "step is" if later == 1 else "steps are"}


DECODER_CLAIMS = types.MappingProxyType({
    "first_reads_last": Claim(_first_reads_last, _first),
    "last_step_keys": Claim(_last_step, _keys),
    "sort_reads_content": Claim(_sorts_by_content, _content),
    "free_one_behind": Claim(_free_behind, _behind),
    "induction_copies_wrong": Claim(_copies_after_wrong, _copies),
})


# --- the KV cache (CacheView) -------------------------------------------------------------------------


def _cache_saves(s) -> bool:
    """An encoder–decoder (its encoder ran once before step 1, the answer says) past the first step
    ("… decoder layers on all … positions"), where the cache computes fewer multiplications."""
    counts = s.view.counts
    return (counts is not None and s.view.n_source > 0 and s.view.position >= 1
            and counts.cached[s.view.step] < counts.uncached[s.view.step])


def _saves(s) -> dict:
    _, values = count_claim(s.view)
    layers = s.view.n_layers
    return {**values, "positions": spelled(s.view.position + 1),
            "layers": "both" if layers == 2 else f"all {spelled(layers)}",
            "uncached_m": values["uncached_total"] / 1e6, "cached_m": values["cached_total"] / 1e6}


CACHE_CLAIMS = types.MappingProxyType({"cache_saves": Claim(_cache_saves, _saves)})


# --- the architectures (ArchitectureView) -------------------------------------------------------------


@loaded(4)  # one int per shipped decoder task
def _shipped_parameters(task: str) -> int | None:
    try:
        return count_parameters(load_model(DECODER_MODELS[task]).model)
    except PretrainedModelError:
        return None


# Parameters of the original Transformer's base model, in millions (Vaswani et al. 2017, table 3): its
# encoder's tokens, decoder's tokens and output projection share one table.
PAPER_BASE_MILLIONS = 65


def one_table(parameters: int, vocab: int, d_model: int) -> int:
    """An encoder–decoder's `parameters` with one token table for the encoder's tokens, the decoder's and the
    output projection, as the original shared it: two of its three vocab × d tables fewer."""
    return parameters - 2 * vocab * d_model


def _counts(s) -> dict:
    view, d, n = s.view, s.settings.d_model, s.settings.n_layers
    decoder, both = view.row("decoder-only"), view.row("encoder–decoder")
    share = decoder.parameters / both.parameters
    same = [task for task in ("reverse", "sort") if _shipped_parameters(task) == both.parameters]
    return {"share": share, "decoder": decoder.parameters, "both": both.parameters,
            "same": f" (exactly the {same[0]} model's count)" if same else "",
            "per_decoder": decoder.in_layers / (n * d * d), "per_both": both.in_layers / (n * d * d),
            "decoder_m": decoder.parameters / 1e6, "both_m": both.parameters / 1e6,
            "embed_m": decoder.in_embeddings / 1e6, "layers_m": decoder.in_layers / 1e6,
            "layer_share": decoder.in_layers / both.in_layers,
            # one table for the encoder's tokens, the decoder's and the output projection, as the original shared
            "shared_m": one_table(both.parameters, s.settings.vocab, d) / 1e6, "paper_m": PAPER_BASE_MILLIONS,
            "how": "A little above half" if share < 0.6 else "Above half"}


def _under_half(s) -> bool:
    values = _counts(s)
    return values["share"] < 0.5 and values["layer_share"] < 0.5


def _over_half(s) -> bool:
    decoder = s.view.row("decoder-only")
    values = _counts(s)
    return values["share"] > 0.5 and decoder.in_embeddings > decoder.in_layers and values["layer_share"] < 0.5


ARCHITECTURE_CLAIMS = types.MappingProxyType({
    "decoder_under_half": Claim(_under_half, _counts),
    "decoder_over_half": Claim(_over_half, _counts),
})
