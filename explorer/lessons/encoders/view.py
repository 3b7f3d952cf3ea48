"""The lesson "What encoders are for", declared: its settings (the controls), its views (settings →
arrays), one for the page and one per section with settings of its own.  The runtime (explorer/serve)
caches them; explorer/lessons/encoders/encoders.py draws them.

    EncoderSettings / encoder_view       a sentence's token vectors, pooled into one vector (mean and
                                         [CLS]), and how well each pooling works on the corpus
    SimilaritySettings / similarity_view  cosines of sentences the user edits, beside word overlap
    SearchSettings / search_view         the corpus searched by meaning and by word overlap
    SinkSettings / sink_view             attention to [CLS] and [SEP] per layer and head
    BiRNNSettings / birnn_view           ‖∂y_t/∂x_s‖ of the one-way loop, the BiRNN and unmasked attention

Text that the model cannot read as words (empty, only punctuation, only characters it has no word
pieces for, another script) is replaced by the default with a message saying why (`unreadable`).
A missing or damaged model is reported in the view (`problem`), never raised.
"""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np

from explorer.analysis.dependency import dependency_path_lengths
from explorer.analysis.dependency_views import dependency_views
from explorer.analysis.encoders import PoolingScores, attention_sinks, pooling_report
from explorer.kit.settings import setting
from explorer.training.minilm import SENTENCE_TOKENS, MiniLMError, checked_text, load_minilm, unreadable
from explorer.training.sentences import cosine_matrix, load_corpus, word_overlap_search, words

__all__ = [
    "BIRNN_WIDTH",
    "MAX_SENTENCES",
    "POOLING_LABELS",
    "PRESETS",
    "BiRNNSettings",
    "BiRNNView",
    "EncoderSettings",
    "EncoderView",
    "SearchSettings",
    "SearchView",
    "SimilaritySettings",
    "SimilarityView",
    "SinkSettings",
    "SinkView",
    "birnn_view",
    "encoder_view",
    "search_view",
    "shared_piece_cosines",
    "similarity_view",
    "sink_view",
]

DEFAULT_TEXT = "The puppy fell asleep on the sofa."
DEFAULT_QUERY = "My dog is sleeping on the couch."
MAX_TEXT = 300  # characters of one sentence or query
MAX_SENTENCES = 8  # rows of the similarity matrix
MAX_LINES_CHARS = 1200
BIRNN_WIDTH = 16  # as the gradient lesson's dependency view
POOLING_LABELS = {"mean": "mean of the token vectors", "cls": "the [CLS] vector"}
PRESETS = {
    "tired / wide": ("The animal didn't cross the street because it was too tired.",
                     "The animal didn't cross the street because it was too wide.",
                     "The street was too wide for the animal to cross."),
    "paraphrases": ("The puppy fell asleep on the sofa.", "The young dog dozed off on the couch.",
                    "Bees carry pollen from flower to flower.", "Pollen is moved between blossoms by bees."),
    "word order": ("The dog bit the man.", "The man bit the dog.", "The cat chased the mouse around the kitchen.",
                   "The mouse chased the cat around the kitchen."),
}






def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    array.setflags(write=False)
    return array


# --- sentence vectors --------------------------------------------------------------------------------


@dataclass(frozen=True)
class EncoderSettings:
    text: str = setting(DEFAULT_TEXT, "Sentence to pool", url="text", max_chars=MAX_TEXT,
                        help="Any English sentence: its token vectors and the two sentence vectors are drawn.")
    pooling: str = setting("mean", "Sentence vector for sections 3 and 4", url="pooling", options=tuple(POOLING_LABELS),
                           widget="radio", captions=tuple(POOLING_LABELS.values()),
                           help="mean: the average of the token vectors, as the model was trained. "
                           "[CLS]: the first token's vector, BERT's classifier input.")


@dataclass(frozen=True)
class EncoderView:
    """One sentence through MiniLM: word pieces, their last hidden states (T, 384), their mean, and the
    cosine of each token vector with the mean and with [CLS]; the corpus scores of both poolings."""

    text: str
    notes: tuple[str, ...]
    problem: str | None
    tokens: tuple[str, ...] = ()
    hidden: np.ndarray | None = None  # (T, 384) float32
    mean: np.ndarray | None = None  # (384,) the average of the rows of hidden (before normalising)
    to_mean: np.ndarray | None = None  # (T,) cosine of each token vector with the mean
    cls_mean: float = float("nan")  # cosine of the [CLS] vector with the mean vector
    report: types.MappingProxyType | None = None  # pooling -> PoolingScores on the corpus
    corpus_size: int = 0
    layers: int = 0  # the model's shape, for the prose
    vocabulary: int = 0


def encoder_view(settings: EncoderSettings) -> EncoderView:
    try:
        text, notes = checked_text(settings.text, DEFAULT_TEXT, "sentence")
        encoded, _, hidden = load_minilm().trace(text, SENTENCE_TOKENS)
        report: dict[str, PoolingScores] = pooling_report()
    except MiniLMError as problem:
        return EncoderView(settings.text, (), str(problem))
    if encoded.cut:
        notes += (f"Only the first {SENTENCE_TOKENS - 2} word pieces are read (the model's sentence limit): "
                  f"the last {encoded.cut} were left out.",)
    hidden = hidden.astype(np.float64)
    mean = hidden.mean(axis=0)
    to_mean = cosine_matrix(np.vstack([mean, hidden]))[0, 1:]
    config = load_minilm().config
    return EncoderView(text, notes, None, tuple(encoded.tokens), _readonly(hidden), _readonly(mean),
                       _readonly(to_mean), float(to_mean[0]), types.MappingProxyType(report),
                       len(load_corpus()), config.n_layers, config.vocab_size)


# --- similarity ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimilaritySettings:
    pooling: str = "mean"  # the sidebar's
    preset: str = setting("tired / wide", "Example sentences", url="sims", options=tuple(PRESETS),
                          help="Pick a set of sentences, then edit them below (one per line).")
    sentences: str = setting("\n".join(PRESETS["tired / wide"]), "Sentences, one per line", url="lines",
                             max_chars=MAX_LINES_CHARS, default_from=lambda s: "\n".join(PRESETS[s.preset]),
                             help=f"Two to {MAX_SENTENCES} sentences, one per line.")


@dataclass(frozen=True)
class SimilarityView:
    sentences: tuple[str, ...]
    notes: tuple[str, ...]
    problem: str | None
    cosine: np.ndarray | None = None  # (n, n) of the chosen pooling's sentence vectors
    overlap: np.ndarray | None = None  # (n, n) Jaccard similarity of the word sets (order-blind)
    pooling: str = "mean"
    by_pooling: types.MappingProxyType | None = None  # pooling -> (n, n) cosines of that sentence vector


def _lines(settings: SimilaritySettings) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The sentences to compare (readable lines, at most MAX_SENTENCES) and the messages about the rest."""
    lines = [line.strip() for line in settings.sentences.splitlines() if line.strip()]
    kept, notes = [], []
    for number, line in enumerate(lines, start=1):
        reason = unreadable(line)
        if reason is not None:
            notes.append(f"Line {number} {reason}, so it is left out.")
        elif len(kept) < MAX_SENTENCES:
            kept.append(line)
    if len([line for line in lines if unreadable(line) is None]) > MAX_SENTENCES:
        notes.append(f"Only the first {MAX_SENTENCES} readable lines are compared.")
    if len(kept) < 2:
        kept = list(PRESETS[settings.preset])
        notes.append(f"Fewer than two sentences the model can read: showing the “{settings.preset}” "
                     "sentences instead.")
    return tuple(kept), tuple(notes)


def similarity_view(settings: SimilaritySettings) -> SimilarityView:
    try:
        sentences, notes = _lines(settings)
        by_pooling = {p: _readonly(load_minilm().similarity(list(sentences), p)) for p in POOLING_LABELS}
    except MiniLMError as problem:
        return SimilarityView((), (), str(problem))
    sets = [words(s) for s in sentences]
    overlap = np.array([[len(a & b) / len(a | b) if a | b else 0.0 for b in sets] for a in sets])
    return SimilarityView(sentences, notes, None, by_pooling[settings.pooling], _readonly(overlap), settings.pooling,
                          types.MappingProxyType(by_pooling))


def shared_piece_cosines(a: str, b: str) -> dict[str, float]:
    """For each word piece found exactly once in each of two sentences: the cosine of its last-layer
    vector in `a` with its vector in `b` — the same word in another place or role, no pooling."""
    model = load_minilm()
    (first, _, one), (second, _, other) = model.trace(a, SENTENCE_TOKENS), model.trace(b, SENTENCE_TOKENS)
    cosines = {}
    for piece in dict.fromkeys(first.tokens):
        if first.tokens.count(piece) == 1 and second.tokens.count(piece) == 1:
            x = one[first.tokens.index(piece)].astype(np.float64)
            y = other[second.tokens.index(piece)].astype(np.float64)
            cosines[piece] = float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))
    return cosines


# --- search ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchSettings:
    pooling: str = "mean"  # the sidebar's
    query: str = setting(DEFAULT_QUERY, "Query", url="query", max_chars=MAX_TEXT,
                         help="Any English sentence: the corpus is searched for the nearest in meaning.")
    k: int = setting(5, "Results", url="k", bounds=(1, 10, 1))


@dataclass(frozen=True)
class SearchView:
    """The k nearest corpus sentences by cosine and by word overlap: (index, score) each; for the
    best hit by meaning, how much each of its word pieces adds to the score (mean pooling)."""

    query: str
    notes: tuple[str, ...]
    problem: str | None
    meaning: tuple[tuple[int, float], ...] = ()
    overlap: tuple[tuple[int, float], ...] = ()
    overlap_of_meaning: tuple[float, ...] = ()  # word overlap of each hit by meaning
    corpus: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    pooling: str = "mean"
    top_tokens: tuple[str, ...] = ()
    top_parts: np.ndarray | None = None  # sums to the best hit's cosine (mean pooling), else None


def _parts(query: str, sentence: str) -> tuple[tuple[str, ...], np.ndarray]:
    """The cosine of two mean-pooled sentence vectors split over the second one's word pieces:
    cos = Σ_t q̂·h_t / (T ‖h̄‖), q̂ the query's unit vector, h̄ the mean of the T token vectors h_t."""
    model = load_minilm()
    asked = model.embed([query], "mean")[0].astype(np.float64)
    encoded, _, hidden = model.trace(sentence, SENTENCE_TOKENS)
    hidden = hidden.astype(np.float64)
    mean_norm = np.linalg.norm(hidden.mean(axis=0))
    return tuple(encoded.tokens), _readonly(hidden @ asked / (len(hidden) * mean_norm))


def search_view(settings: SearchSettings) -> SearchView:
    corpus = load_corpus()
    try:
        query, notes = checked_text(settings.query, DEFAULT_QUERY, "query")
        model = load_minilm()
        meaning = model.search(query, corpus.sentences, settings.k, settings.pooling)
    except MiniLMError as problem:
        return SearchView(settings.query, (), str(problem))
    overlap = word_overlap_search(query, corpus.sentences, settings.k)
    asked = words(query)
    shared = tuple(len(asked & words(corpus.sentences[i])) / len(asked | words(corpus.sentences[i]))
                   for i, _ in meaning)
    tokens, parts = _parts(query, corpus.sentences[meaning[0][0]]) if settings.pooling == "mean" else ((), None)
    topics = tuple(corpus.topic_of(i) for i in range(len(corpus)))
    return SearchView(query, notes, None, tuple(meaning), tuple(overlap), shared, corpus.sentences, topics,
                      settings.pooling, tokens, parts)


# --- attention sinks ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SinkSettings:
    """No controls: measured once on the shipped corpus."""


@dataclass(frozen=True)
class SinkView:
    problem: str | None
    cls: np.ndarray | None = None  # (layers, heads) mean weight to [CLS]
    sep: np.ndarray | None = None
    uniform: float = float("nan")  # the mean weight one key gets from an even spread
    texts: int = 0
    rows: int = 0


def sink_view(settings: SinkSettings) -> SinkView:
    try:
        sinks = attention_sinks()
    except MiniLMError as problem:
        return SinkView(str(problem))
    return SinkView(None, sinks.cls, sinks.sep, sinks.uniform, sinks.texts, sinks.rows)


# --- the bidirectional RNN -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BiRNNSettings:
    T: int = setting(24, "Sequence length for the matrices", url="birnn_T", options=(8, 16, 24, 32))


@dataclass(frozen=True)
class BiRNNView:
    panels: tuple[tuple[str, np.ndarray], ...]  # (title, ‖∂y_t/∂x_s‖), as the gradient lesson's view
    paths: types.MappingProxyType  # kind -> (T, T) steps on the shortest path (inf: none)
    reach: types.MappingProxyType  # kind -> share of the (t, s) pairs with a non-zero dependency
    distance: int  # how far back and ahead `fall` looks
    fall: types.MappingProxyType  # kind -> log10 of the mean ‖∂y_t/∂x_s‖ at |t − s| = distance over the diagonal's


def birnn_view(settings: BiRNNSettings) -> BiRNNView:
    T = settings.T
    one_way = dependency_views("rnn", T, BIRNN_WIDTH)
    both = dependency_views("birnn", T, BIRNN_WIDTH)
    panels = (("tanh RNN: one way", one_way.recurrent), ("BiRNN: both ways", both.recurrent),
              ("encoder attention: unmasked", both.unmasked))
    kinds = ("rnn", "birnn", "unmasked")
    paths = {kind: _readonly(dependency_path_lengths(T, kind)) for kind in kinds}
    reach = {kind: float((matrix > 0).mean()) for kind, (_, matrix) in zip(kinds, panels, strict=True)}
    distance = min(10, T - 1)
    gap = np.abs(np.subtract.outer(np.arange(T), np.arange(T)))
    fall = {kind: float(np.log10(matrix[gap == distance].mean() / np.diag(matrix).mean()))
            for kind, (_, matrix) in zip(kinds, panels, strict=True)}
    return BiRNNView(panels, types.MappingProxyType(paths), types.MappingProxyType(reach), distance,
                     types.MappingProxyType(fall))
