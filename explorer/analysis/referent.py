"""What a real model's heads do with "it": measured, not assumed.

For every sentence of the "it" task's held-out set ("the dog didn't catch the cat because it was too
slow", 1000 of them, generated from a fixed seed by explorer.training.tasks.CoreferenceTask), run
all-MiniLM-L6-v2 and read, in every layer and head, the attention from "it" to the two nouns (a noun
split into word pieces gets the sum over its pieces).  A head scores a sentence as right when it
gives the noun "it" refers to more weight than the other noun.

Half the sentences point "it" at the subject, half at the object, so a head that always prefers the
subject (or the nearer noun) scores about 50 % overall: the scores are also given separately for the
two halves.  A head that follows the referent must beat 50 % in both.

The numbers are computed once and shipped as pretrained/minilm-referent-heads.json; regenerate with

    .venv/bin/python -m explorer.analysis.referent
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..training.minilm import PACKAGE, VERSION, MiniLM, load_minilm
from ..training.pretrained import PRETRAINED_DIR
from ..training.tasks import CoreferenceTask

__all__ = ["REFERENT_FILE", "CorefSentence", "coreference_sentences", "head_scores", "referent_report"]

REFERENT_FILE = PRETRAINED_DIR / "minilm-referent-heads.json"
CHUNK = 125  # sentences per forward pass


@dataclass(frozen=True)
class CorefSentence:
    words: tuple[str, ...]
    referent: int  # word index of the noun "it" refers to
    other: int  # word index of the other noun

    @property
    def about_subject(self) -> bool:
        return self.referent < self.other


def coreference_sentences(task: CoreferenceTask | None = None) -> list[CorefSentence]:
    """The "it" task's held-out sentences with the positions of "it"'s referent and the other noun."""
    task = task or CoreferenceTask()
    batch = task.evaluation()
    sentences = []
    for row, target in zip(batch.inputs, batch.targets[:, task.it_position], strict=True):
        words = tuple(task.decode(row))
        nouns = [i for i, w in enumerate(words) if w in task.nouns]
        referent = words.index(task.vocab[int(target)])
        sentences.append(CorefSentence(words, referent, next(i for i in nouns if i != referent)))
    return sentences


def _pieces(minilm: MiniLM, words: tuple[str, ...]) -> tuple[list[int], list[int | None]]:
    """Token ids of the pre-split words ([CLS] … [SEP]) and the word each piece comes from."""
    encoding = minilm.tokenizer.encode(list(words), is_pretokenized=True)
    return encoding.ids, encoding.word_ids


def head_scores(minilm: MiniLM, sentences: list[CorefSentence]) -> dict[str, np.ndarray]:
    """Per sentence, layer and head: the attention from "it" to the referent and to the other noun.

    Returns {"right": (N, layers, heads), "other": (N, layers, heads)}, float64."""
    right, other = [], []
    for start in range(0, len(sentences), CHUNK):
        part = sentences[start:start + CHUNK]
        encoded = [_pieces(minilm, s.words) for s in part]
        T = max(len(ids) for ids, _ in encoded)
        ids = torch.zeros(len(part), T, dtype=torch.long)  # [PAD] is id 0, hidden by the mask
        valid = torch.zeros(len(part), T, dtype=torch.bool)
        for row, (piece_ids, _) in enumerate(encoded):
            ids[row, :len(piece_ids)] = torch.tensor(piece_ids)
            valid[row, :len(piece_ids)] = True
        _, weights = minilm.run(ids, valid)  # (B, layers, heads, T, T)
        for row, (sentence, (_, word_of)) in enumerate(zip(part, encoded, strict=True)):
            it = word_of.index(sentence.words.index("it"))
            from_it = weights[row, :, :, it, :].double().numpy()  # (layers, heads, T)
            right.append(from_it[:, :, [j for j, w in enumerate(word_of) if w == sentence.referent]].sum(-1))
            other.append(from_it[:, :, [j for j, w in enumerate(word_of) if w == sentence.other]].sum(-1))
    return {"right": np.stack(right), "other": np.stack(other)}


def referent_report(minilm: MiniLM | None = None, sentences: list[CorefSentence] | None = None) -> dict:
    """The shipped JSON: per head the share of sentences where "it" weighs the right noun more,
    overall and split by the referent's role, and the mean weights; the heads ranked."""
    minilm = minilm or load_minilm()
    sentences = sentences if sentences is not None else coreference_sentences()
    scores = head_scores(minilm, sentences)
    wins = scores["right"] > scores["other"]  # (N, layers, heads)
    subject = np.array([s.about_subject for s in sentences])
    n_layers, n_heads = wins.shape[1:]
    overall, when_subject, when_object = wins.mean(0), wins[subject].mean(0), wins[~subject].mean(0)
    ranked = sorted(((layer, head) for layer in range(n_layers) for head in range(n_heads)),
                    key=lambda lh: -overall[lh])

    def rounded(array: np.ndarray) -> list:
        return np.round(array, 4).tolist()

    task = CoreferenceTask()
    return {
        "model": "all-MiniLM-L6-v2", "package": f"{PACKAGE}=={VERSION}",
        "sentences": len(sentences), "about_subject": int(subject.sum()),
        "source": f"the \"it\" task's held-out set, {task.eval_size} sentences from seed {task.eval_seed}",
        "seed": task.eval_seed,
        "measure": "share of sentences where the attention from \"it\" to the noun it refers to is larger "
                   "than to the other noun (a noun's word pieces summed)",
        "regenerate": ".venv/bin/python -m explorer.analysis.referent",
        "right_above_other": rounded(overall),  # [layer][head], counted from 0
        "right_above_other_when_subject": rounded(when_subject),
        "right_above_other_when_object": rounded(when_object),
        "mean_weight_right": rounded(scores["right"].mean(0)),
        "mean_weight_other": rounded(scores["other"].mean(0)),
        "best_heads": [{"layer": layer + 1, "head": head + 1, "right_above_other": rounded(overall[layer, head]),
                        "when_subject": rounded(when_subject[layer, head]),
                        "when_object": rounded(when_object[layer, head])} for layer, head in ranked[:5]],
    }


def main(path: Path = REFERENT_FILE) -> None:
    torch.set_num_threads(1)
    report = referent_report()
    path.write_text(json.dumps(report, indent=1) + "\n")
    best = report["best_heads"][0]
    print(f"wrote {path}: best head layer {best['layer']} head {best['head']}, right noun above the other "
          f"in {best['right_above_other']:.1%} of {report['sentences']} sentences", file=sys.stderr)


if __name__ == "__main__":
    main()
