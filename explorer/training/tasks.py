"""Toy tasks, generated in code from a seed, on which small models learn attention that means something.

* reverse / sort   (encoder–decoder): cross-attention traces the anti-diagonal / the permutation.
* induction        (decoder-only):    a random sequence repeated; predicting the repeat needs
                                      previous-token and induction heads.
* coreference      (encoder-only):    "the animal didn't cross the street because it was too tired"
                                      — output, at "it", the noun that "it" refers to.
* recall           (transformer and RNNs): output the first letter after a gap of up to 256 letters.

Every task has a fixed vocabulary, a `batch(n, generator)` that returns tensors, and an `evaluation`
set generated from a fixed seed so that a model's card accuracy can be reproduced exactly.
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass

import torch

from .parsed_input import ParsedInput

__all__ = [
    "TASKS",
    "Batch",
    "CoreferenceTask",
    "InductionTask",
    "ParsedInput",
    "RecallTask",
    "SequenceToSequenceTask",
    "Task",
    "get_task",
]

PAD, BOS, EOS = "<pad>", "<s>", "</s>"


@dataclass
class Batch:
    """inputs: (B, T) ids.  targets: (B, T_out) ids, -100 where there is no loss.
    decoder_inputs: teacher-forced decoder input (encoder–decoder tasks only).
    valid: (B, T) False on padding.  distance: per-example gap for the recall task."""

    inputs: torch.Tensor
    targets: torch.Tensor
    valid: torch.Tensor
    decoder_inputs: torch.Tensor | None = None
    decoder_valid: torch.Tensor | None = None
    distance: torch.Tensor | None = None


class Task(ABC):
    """Common interface: vocabulary, batches, a fixed evaluation set, token ↔ text helpers, and what
    a page needs to know about user text: how to read it (`parse`) and the right answer to it
    (`expected_output`)."""

    name: str = ""
    architecture: str = ""  # "encoder", "decoder", "encoder-decoder" — what a transformer for it is
    description: str = ""
    max_len: int = 0
    eval_seed: int = 12345
    eval_size: int = 1000
    spells_words: bool = False  # may a typed word stand for its letters ('HELLO' for H E L L O)?

    def __init__(self, vocab: list[str]):
        self.vocab = vocab
        self.index = {token: i for i, token in enumerate(vocab)}

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def encode(self, tokens: list[str]) -> list[int]:
        return [self.index[t] for t in tokens]

    def decode(self, ids) -> list[str]:
        return [self.vocab[int(i)] for i in ids]

    @property
    def max_input_tokens(self) -> int:
        """How many tokens a user may give: what the model was built for."""
        return self.max_len

    def words(self, text: str) -> list[str]:
        """Text split into candidate tokens (before the vocabulary check)."""
        return text.split()

    def parse(self, text: str, max_tokens: int | None = None) -> ParsedInput:
        """User text as this task's tokens; unknown words and the surplus are reported, never raised."""
        max_tokens = self.max_input_tokens if max_tokens is None else max_tokens
        tokens, unknown, markers = [], [], []
        for word in self.words(text[:2000]):
            if word in self.index:  # the model's own markers are not input it reads
                (markers if word in (PAD, BOS, EOS) else tokens).append(word)
            elif self.spells_words and len(word) > 1 and all(ch in self.index for ch in word):
                tokens.extend(word)  # "HELLO" → H E L L O
            else:
                unknown.append(word)
        cut = max(0, len(tokens) - max_tokens)
        return ParsedInput(tuple(tokens[:max_tokens]), tuple(unknown), cut, tuple(markers))

    def expected_output(self, tokens: list[str]) -> list[str] | None:
        """The right answer to the input, where the task defines one (shown beside the model's)."""
        return None

    def details(self) -> dict:
        """What a model card should record about this task beyond its name (e.g. how data is drawn)."""
        return {}

    @abstractmethod
    def batch(self, n: int, generator: torch.Generator) -> Batch:
        """n random examples drawn with `generator`."""

    def evaluation(self) -> Batch:
        """The fixed held-out set (its seed is never used for training batches)."""
        return self.batch(self.eval_size, torch.Generator().manual_seed(self.eval_seed))


class SequenceToSequenceTask(Task):
    """Reverse or sort a sequence of 2–10 letters (encoder–decoder, teacher forcing)."""

    architecture = "encoder-decoder"
    symbols = tuple("ABCDEFGHIJKLMNOP")
    spells_words = True

    def __init__(self, name: str, min_len: int = 2, max_seq: int = 10):
        super().__init__([PAD, BOS, EOS, *self.symbols])
        if name not in ("reverse", "sort"):
            raise ValueError(name)
        self.name = name
        self.min_len, self.max_seq = min_len, max_seq
        self.max_len = max_seq + 1  # room for BOS / EOS
        self.description = (
            "Write the input sequence backwards." if name == "reverse" else "Write the input letters in sorted order."
        )

    def answer(self, symbols: list[str]) -> list[str]:
        return symbols[::-1] if self.name == "reverse" else sorted(symbols)

    @property
    def max_input_tokens(self) -> int:
        return self.max_seq

    def expected_output(self, tokens: list[str]) -> list[str] | None:
        return [*self.answer(list(tokens)), EOS]

    def batch(self, n: int, generator: torch.Generator) -> Batch:
        first = self.index[self.symbols[0]]
        lengths = torch.randint(self.min_len, self.max_seq + 1, (n,), generator=generator)
        letters = torch.randint(first, first + len(self.symbols), (n, self.max_seq), generator=generator)
        pad, bos, eos = self.index[PAD], self.index[BOS], self.index[EOS]
        positions = torch.arange(self.max_seq)[None]
        valid = positions < lengths[:, None]
        source = torch.where(valid, letters, pad)
        if self.name == "reverse":
            # Reverse the first `length` entries of each row: index length-1-t for t < length.
            order = (lengths[:, None] - 1 - positions).clamp(min=0)
            answer = torch.gather(source, 1, order)
        else:
            answer = torch.where(valid, letters, 10**6).sort(dim=1).values
        answer = torch.where(valid, answer, pad)
        # Decoder reads <s> + answer, and must write answer + </s>.
        decoder_inputs = torch.cat([torch.full((n, 1), bos), answer], 1)
        targets = torch.cat([answer, torch.full((n, 1), pad)], 1)
        targets[torch.arange(n), lengths] = eos
        decoder_valid = torch.arange(self.max_seq + 1)[None] <= lengths[:, None]
        targets = torch.where(decoder_valid, targets, -100)
        return Batch(source, targets, valid, decoder_inputs, decoder_valid)


class InductionTask(Task):
    """Random symbols, then the same symbols again; predict the next token (decoder-only).

    The first half is unpredictable; in the second half each next token can be found by looking
    up where the current token occurred before and copying what followed it — an induction head.
    """

    name = "induction"
    architecture = "decoder"
    description = "Continue a sequence whose second half repeats the first."

    def __init__(self, n_symbols: int = 24, min_half: int = 4, max_half: int = 10):
        if n_symbols < max_half:
            raise ValueError("need at least as many symbols as the longest half")
        super().__init__([PAD] + [f"t{i}" for i in range(n_symbols)])
        self.n_symbols, self.min_half, self.max_half = n_symbols, min_half, max_half
        self.max_len = 2 * max_half

    def batch(self, n: int, generator: torch.Generator) -> Batch:
        halves = torch.randint(self.min_half, self.max_half + 1, (n,), generator=generator)
        # Distinct symbols within a sequence, so "where did this token occur before?" has one answer.
        first = torch.rand(n, self.n_symbols, generator=generator).argsort(dim=1)[:, : self.max_half] + 1
        positions = torch.arange(self.max_len)[None]
        source_index = torch.where(positions < halves[:, None], positions, positions - halves[:, None])
        tokens = torch.gather(first, 1, source_index.clamp(max=self.max_half - 1))
        valid = positions < 2 * halves[:, None]
        tokens = torch.where(valid, tokens, 0)
        # Next-token targets, scored only where they are predictable: from the second repeated token
        # on (nothing announces where the repeat starts, so its first token is a guess).
        targets = torch.full_like(tokens, -100)
        next_tokens = tokens[:, 1:]
        predictable = (positions[:, 1:] > halves[:, None]) & valid[:, 1:]
        targets[:, :-1] = torch.where(predictable, next_tokens, -100)
        return Batch(tokens, targets, valid)


# Words for the coreference task, a small Winograd schema: the adjective decides who "it" is.
# Agent adjectives describe the one who failed to act (the subject); place and quarry adjectives
# describe what it acted on (the object).  Half the sentences pair two animals, so the noun's kind
# (animal or place) cannot give the answer away: the model has to find the right noun by its role,
# and to copy a word it has to attend to it.
ANIMATES = ["animal", "dog", "cat", "horse", "child", "man", "woman", "cow", "fox", "goat", "boy", "girl"]
PLACES = ["street", "road", "river", "bridge", "field", "stream", "track", "lane", "canal", "path"]
VERBS = ["cross", "jump", "swim", "climb", "pass", "walk"]  # an animal … a place
CHASE_VERBS = ["chase", "catch", "follow", "reach", "find", "grab"]  # an animal … another animal
AGENT_ADJECTIVES = ["tired", "sleepy", "scared", "weak", "slow", "lazy"]  # → the subject
PLACE_ADJECTIVES = ["wide", "long", "busy", "deep", "icy", "steep"]  # → the place (object)
QUARRY_ADJECTIVES = ["fast", "quick", "far", "high", "sly", "small"]  # → the chased animal (object)
FRAMES = [("didn't", "because"), ("couldn't", "since"), ("wouldn't", "as")]


class CoreferenceTask(Task):
    """'the ANIMAL didn't VERB the PLACE/ANIMAL because it was too ADJ' → at 'it', output the referent.

    "the animal didn't cross the street because it was too tired / wide" and
    "the dog didn't catch the cat because it was too slow / fast": an agent adjective points to the
    subject, a place or quarry adjective to the object."""

    name = "coreference"
    architecture = "encoder"
    nouns = tuple(ANIMATES + PLACES)
    description = 'At the word "it", name the noun that "it" refers to.'
    max_len = 12
    it_position = 7
    two_animal_share = 0.5  # the share of sentences about two animals (the rest: an animal and a place)

    def __init__(self):
        words = ["the", "it", "was", "too", *[w for pair in FRAMES for w in pair]]
        words += ANIMATES + PLACES + VERBS + CHASE_VERBS + AGENT_ADJECTIVES + PLACE_ADJECTIVES + QUARRY_ADJECTIVES
        super().__init__([PAD, *dict.fromkeys(words)])

    def sentence(self, subject: str, verb: str, obj: str, frame: int, adjective: str) -> list[str]:
        negation, conjunction = FRAMES[frame]
        return ["the", subject, negation, verb, "the", obj, conjunction, "it", "was", "too", adjective]

    def words(self, text: str) -> list[str]:
        """Case and punctuation are ignored: "The animal didn't cross." reads as five words."""
        return re.findall(r"[a-z']+", text.lower())

    def in_grammar(self, tokens: list[str]) -> bool:
        """Is this a sentence of the form the task generates — "the ANIMAL didn't VERB the NOUN because
        it was too ADJECTIVE" with a verb that fits its object — so that the model's answer means
        something?  The model never saw any other shape of sentence."""
        if len(tokens) != 11 or tokens[0] != "the" or tokens[4] != "the" or tokens[7:10] != ["it", "was", "too"]:
            return False
        subject, verb, obj, adjective = tokens[1], tokens[3], tokens[5], tokens[10]
        frame_fits = (tokens[2], tokens[6]) in FRAMES
        verb_fits = (verb in VERBS and obj in PLACES) or (verb in CHASE_VERBS and obj in ANIMATES and obj != subject)
        adjectives = AGENT_ADJECTIVES + (PLACE_ADJECTIVES if obj in PLACES else QUARRY_ADJECTIVES)
        return subject in ANIMATES and frame_fits and verb_fits and adjective in adjectives

    def expected_output(self, tokens: list[str]) -> list[str] | None:
        referent = self.referent(tokens) if self.in_grammar(list(tokens)) else None
        return None if referent is None else [referent]

    def referent(self, tokens: list[str]) -> str | None:
        """The noun that 'it' refers to, or None when the sentence is not one this task defines
        (two nouns, an animal first, a last-word adjective that fits the second noun's kind)."""
        nouns = [t for t in tokens if t in self.nouns]
        if "it" not in tokens or len(nouns) != 2 or nouns[0] not in ANIMATES:
            return None
        subject, obj = nouns
        adjective = tokens[-1]
        if adjective in AGENT_ADJECTIVES:
            return subject
        object_adjectives = PLACE_ADJECTIVES if obj in PLACES else QUARRY_ADJECTIVES
        return obj if adjective in object_adjectives else None

    def referent_positions(self, batch: Batch) -> torch.Tensor:
        """(B,) the position of the noun each sentence's "it" refers to (the target's word)."""
        target = batch.targets[:, self.it_position]
        return (batch.inputs == target[:, None]).float().argmax(1)

    def batch(self, n: int, generator: torch.Generator) -> Batch:
        def pick(words, k):
            return [words[i] for i in torch.randint(0, len(words), (k,), generator=generator)]

        subjects = pick(ANIMATES, n)
        # The chased animal: any animal but the subject (an offset of 1 … len−1 round the list).
        offsets = torch.randint(1, len(ANIMATES), (n,), generator=generator).tolist()
        quarries = [ANIMATES[(ANIMATES.index(s) + k) % len(ANIMATES)] for s, k in zip(subjects, offsets, strict=True)]
        places, verbs, chase_verbs = pick(PLACES, n), pick(VERBS, n), pick(CHASE_VERBS, n)
        frames = torch.randint(0, len(FRAMES), (n,), generator=generator).tolist()
        two_animals = (torch.rand(n, generator=generator) < self.two_animal_share).tolist()
        about_subject = (torch.rand(n, generator=generator) < 0.5).tolist()
        agent_adj, place_adj = pick(AGENT_ADJECTIVES, n), pick(PLACE_ADJECTIVES, n)
        quarry_adj = pick(QUARRY_ADJECTIVES, n)
        rows, targets = [], []
        for i in range(n):
            if two_animals[i]:
                verb, obj, object_adjective = chase_verbs[i], quarries[i], quarry_adj[i]
            else:
                verb, obj, object_adjective = verbs[i], places[i], place_adj[i]
            adjective = agent_adj[i] if about_subject[i] else object_adjective
            tokens = self.sentence(subjects[i], verb, obj, frames[i], adjective)
            rows.append(self.encode(tokens))
            target = [-100] * len(tokens)
            target[self.it_position] = self.index[subjects[i] if about_subject[i] else obj]
            targets.append(target)
        inputs = torch.tensor(rows)
        return Batch(inputs, torch.tensor(targets), torch.ones_like(inputs, dtype=torch.bool))


class RecallTask(Task):
    """A key letter, `distance − 1` more letters, then '?': output the first letter at '?'.

    The distractors come from the key's letters, so a model cannot ignore them: it must keep the
    first token through every later one.  The same data trains a causal transformer and tanh RNN /
    LSTM / GRU: accuracy against distance compares attention's one-step path with the loop's T steps.

    Training gaps are short (`gaps="geometric"`): P(d) = (2/3)(1/3)^(d − 1), so two thirds are 1,
    96 % are 3 or less and 1 in 6561 exceeds 8.  The evaluation set holds every distance 1 …
    max_distance (256) equally often: it measures how far the memory learned from short gaps reaches.
    Also: "log-uniform" (per batch, log of the longest gap L uniform on [0, log(max_distance + 1)],
    gaps uniform on 1 … L) and "uniform" (1 … max_distance).  A batch is as long as its longest gap."""

    name = "recall"
    architecture = "decoder"
    description = "Remember the first letter across a gap of other letters."
    keys = tuple("ABCDEFGH")
    eval_size = 1024  # 4 per distance: a lesson page evaluates four models on it when it first opens
    spells_words = True
    GAPS = ("geometric", "log-uniform", "uniform")
    GEOMETRIC_STOP = 2 / 3  # "geometric" gaps: the chance that a gap ends at each letter

    def __init__(self, max_distance: int = 256, gaps: str = "geometric"):
        super().__init__([PAD, "?", *self.keys])
        if gaps not in self.GAPS:
            raise ValueError(f"unknown gap distribution {gaps!r}; expected one of {self.GAPS}")
        if max_distance < 1:
            raise ValueError("max_distance must be at least 1")
        self.max_distance, self.gaps = max_distance, gaps
        self.max_len = max_distance + 1

    def batch(self, n: int, generator: torch.Generator) -> Batch:
        if self.gaps == "uniform":
            distance = torch.randint(1, self.max_distance + 1, (n,), generator=generator)
        elif self.gaps == "geometric":
            # Inverse CDF: P(d > k) = (1 − stop)^k, so d = ceil(log(1 − u) / log(1 − stop)).
            u = torch.rand(n, generator=generator)
            distance = (torch.log1p(-u) / math.log1p(-self.GEOMETRIC_STOP)).ceil().long().clamp(1, self.max_distance)
        else:
            u = torch.rand((), generator=generator).item()
            longest = min(self.max_distance, int(math.exp(u * math.log(self.max_distance + 1))))
            distance = torch.randint(1, longest + 1, (n,), generator=generator)
        return self.examples(distance, generator)

    def evaluation(self) -> Batch:
        """The fixed held-out set: every distance 1 … max_distance equally often, letters from eval_seed."""
        distance = torch.arange(self.eval_size) % self.max_distance + 1
        return self.examples(distance.sort().values, torch.Generator().manual_seed(self.eval_seed))

    def examples(self, distance: torch.Tensor, generator: torch.Generator) -> Batch:
        """One example per entry of `distance` (each 1 … max_distance), as long as the longest."""
        n, length = len(distance), int(distance.max()) + 1
        first = self.index[self.keys[0]]
        letters = torch.randint(first, first + len(self.keys), (n, length), generator=generator)
        positions = torch.arange(length)[None]
        tokens = torch.where(positions == distance[:, None], self.index["?"], letters)
        valid = positions <= distance[:, None]
        tokens = torch.where(valid, tokens, 0)
        targets = torch.where(positions == distance[:, None], letters[:, :1], -100)
        return Batch(tokens, targets, valid, distance=distance)

    def details(self) -> dict:
        details = {"max_distance": self.max_distance, "training_gaps": self.gaps,
                   "evaluation_gaps": "every distance 1 … max_distance equally often"}
        if self.gaps == "geometric":
            details["training_gap_probability"] = "P(d) = (2/3)(1/3)^(d − 1): 2/3 of gaps are 1, 1 in 6561 over 8"
        return details

    def expected_output(self, tokens: list[str]) -> list[str] | None:
        return [tokens[0]] if tokens and tokens[-1] == "?" else None


TASKS = {
    "reverse": lambda: SequenceToSequenceTask("reverse"),
    "sort": lambda: SequenceToSequenceTask("sort"),
    "induction": InductionTask,
    "coreference": CoreferenceTask,
    "recall": RecallTask,
}


def get_task(name: str) -> Task:
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; expected one of {sorted(TASKS)}")
    return TASKS[name]()
