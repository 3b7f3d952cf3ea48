"""Semantic search on MiniLM (issue #30), on one core: embedding the shipped corpus once, then one query → results.

    .venv/bin/python -m benchmarks.encoder_search [--reps N]   (phase `encoder-search` of benchmarks/run.py)

One torch thread.  Each rep starts from empty caches (the model's load cache, the kept corpus vectors
and the lesson's analysis caches), then measures, in wall-clock and process CPU seconds (what a shared
machine's load does not inflate):

    load      reading, checking and building all-MiniLM-L6-v2
    corpus    embedding the 322 corpus sentences once (mean pooling), as the first search does
    query     `search(query, corpus, 5)` with the corpus kept: one query → its 5 results (median and
              worst over QUERIES, each new to the cache)
    page      the lesson's search section for a new query (`search_view`, called directly: the search, the word-overlap
              baseline and the best hit's per-piece split): what a
              student waits for after typing a query
    report    the lesson's cold measurements: `pooling_report` (both poolings over the corpus) and
              `attention_sinks` (every layer and head over the corpus)

Target (issue #30): at most 0.3 s per query.  The load average is printed beside the times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from explorer.analysis import encoders as encoder_analysis
from explorer.lessons.encoders.view import SearchSettings, search_view
from explorer.training import minilm
from explorer.training.sentences import load_corpus

QUERIES = ("How do I keep my plants alive?", "Is it going to rain tomorrow?", "The striker scored in the final minute.",
           "My laptop will not turn on.", "Where can I buy cheap train tickets?", "A song stuck in my head all day.",
           "What should I cook for dinner tonight?", "The children are learning to read.")


TARGET_QUERY_S = 0.3  # issue #30: one query → its results


def timed(work) -> tuple[float, float]:
    start, start_cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - start, time.process_time() - start_cpu


def one_rep() -> dict[str, float]:
    minilm._load.cache_clear()
    minilm._corpus_vectors.cache_clear()
    sentences = load_corpus().sentences
    out = {}
    out["load"], out["load CPU"] = timed(minilm.load_minilm)
    model = minilm.load_minilm()
    out["corpus"], out["corpus CPU"] = timed(lambda: model.corpus_vectors(sentences))
    queries = [timed(lambda q=q: model.search(q, sentences, 5)) for q in QUERIES]
    out["query"], out["query CPU"] = statistics.median(w for w, _ in queries), statistics.median(c for _, c in queries)
    out["query worst"] = max(w for w, _ in queries)
    pages = [timed(lambda q=q: search_view(SearchSettings(query=q))) for q in QUERIES[:4]]
    out["page"], out["page CPU"] = statistics.median(w for w, _ in pages), statistics.median(c for _, c in pages)
    encoder_analysis.pooling_report.cache_clear()
    encoder_analysis.attention_sinks.cache_clear()
    out["report"], out["report CPU"] = timed(lambda: (encoder_analysis.pooling_report(),
                                                     encoder_analysis.attention_sinks()))
    return out


def run(reps: int = 3) -> dict:
    """Phase `encoder-search` of benchmarks/run.py: the medians over `reps` (seconds) and every rep."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        runs = [one_rep() for _ in range(reps)]
    finally:
        torch.set_num_threads(threads)
    return {"reps": reps, "corpus_sentences": len(load_corpus()), "queries": len(QUERIES),
            "median_s": {key: round(statistics.median(rep[key] for rep in runs), 4) for key in runs[0]},
            "runs": [{key: round(value, 4) for key, value in rep.items()} for rep in runs]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    result = run(args.reps)
    for key, value in result["median_s"].items():
        reps = ", ".join(f"{rep[key]:.4f}" for rep in result["runs"])
        print(f"{key:12s} median {value:.4f} s  (reps: {reps})")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {result['corpus_sentences']} corpus "
          f"sentences, {len(QUERIES)} queries; target ≤ {TARGET_QUERY_S} s per query")


if __name__ == "__main__":
    main()
