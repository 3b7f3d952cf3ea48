"""Lesson: inside one block — follow a token from its embedding to the next-token probabilities."""

import contextlib
import functools

import streamlit as st

from explorer.kit.draw import Section, claimed, download_csv, escape_markdown, lesson_text, measured_box, plotly_chart
from explorer.lessons.block.boxes import embedding_box
from explorer.lessons.block.claims import block_facts
from explorer.lessons.block.figures import PER_HEAD, stage_csv
from explorer.lessons.block.norms import norm_table
from explorer.lessons.block.spec import BLOCK, BLOCK_EMBEDDINGS, BLOCK_NORMS, BLOCK_SAMPLING, BLOCK_STACKS
from explorer.lessons.block.view import IN_LAYER, sentence_problem
from explorer.serve.adapter import serve_lesson
from explorer.training.pretrained import PretrainedModelError

text = functools.partial(lesson_text, "block")


def forward_pass(shown) -> None:
    """The key figure: the diagram of the pass, the chosen stage lit, beside that stage's tensor large."""
    view, settings, figures = shown.view, shown.settings, shown.figures
    facts = block_facts(shown)
    diagram_col, stage_col = st.columns([4, 7], gap="medium")
    plotly_chart(figures.diagram, where=diagram_col, key="block_diagram", phone_fits=True)
    plotly_chart(figures.stage, where=stage_col, key="block_stage")
    stage_col.caption(text(f"stage: {settings.part}", **facts))
    words = " · ".join(escape_markdown(token) for token in view.trace.tokens)
    st.markdown(f"**The model reads** &nbsp; {words} &nbsp; → at “{escape_markdown(facts['word'])}” it names "
                f"**{escape_markdown(facts['answer'])}** ({facts['answer_p']:.2f})")
    name = f"{settings.part}_L{settings.layer}_H{settings.head}" if settings.part in IN_LAYER | PER_HEAD \
        else settings.part
    download_csv(f"block_{name}.csv", "Download this stage's tensor (CSV)", stage_csv, view, key="block_csv")


def parameters(shown) -> None:
    """Where a block's parameters are: counted on the model's modules."""
    p, c = shown.view.parameters, shown.view.config
    st.markdown(text("parameters", **block_facts(shown)))
    st.dataframe({"part of one layer": ["attention: W_Q, W_K, W_V, W_O and their biases",
                                        f"feed-forward: {c.d_model} → {c.d_ff} → {c.d_model}",
                                        "two LayerNorms (scale and shift)"],
                  "parameters": [p["attention"], p["ffn"], p["norms"]],
                  "share of the layer": [f"{v / p['layer']:.0%}" for v in (p["attention"], p["ffn"], p["norms"])]},
                 hide_index=True)
    with contextlib.suppress(PretrainedModelError):  # a damaged toy model: the key figure says which, and the fix
        measured_box(embedding_box())


def embeddings(shown) -> None:
    """A real model's embedding table: a piece's nearest pieces, and typed words placed in 2-D."""
    view = shown.view
    if view.problems:
        st.info(escape_markdown("Not used: " + "; ".join(view.problems) + "."), icon=":material/info:")
    say(BLOCK_EMBEDDINGS, shown, "table")
    table_col, map_col = st.columns([1, 2], gap="large")
    table_col.dataframe({f"nearest to “{view.piece}”": [p for p, _ in view.neighbours],
                         "cosine": [round(c, 2) for _, c in view.neighbours]}, hide_index=True)
    plotly_chart(shown.figures.chart, where=map_col, key="words_chart")


def say(spec, shown, *names: str) -> None:
    """Each named claim's sentence that holds for what is shown (explorer/lessons/block/prose.md)."""
    for name in names:
        sentence = claimed(spec, name, shown)
        if sentence:
            st.markdown(sentence)


def norms(shown) -> None:
    """LayerNorm against BatchNorm on the same activations."""
    st.dataframe(norm_table(shown.view), hide_index=True)
    say(BLOCK_NORMS, shown, "layer_not_batch")


def residual_trained(shown) -> None:
    """Plain against residual stacks, trained: the shipped curves, and what they show."""
    plotly_chart(shown.figures.chart, key="stacks_chart")
    say(BLOCK_STACKS, shown, "degradation", "residual_helps")
    card = shown.view.curves.card
    st.caption(text("stacks: how", steps=card["steps"], seeds=len(card["seeds"]), d=card["model"]["d_model"],
                    heads=card["model"]["n_heads"], batch=card["batch_size"], command=card["command"]))


def sampling(shown) -> None:
    """From the last position's scores to a drawn token, on the induction decoder."""
    plotly_chart(shown.figures.chart, key="sampling_chart")
    say(BLOCK_SAMPLING, shown, "draw", "unscored")


serve_lesson(
    BLOCK,
    lead="One transformer layer opened up: follow a token through it, box by box, from its row of the embedding "
    "table to the probabilities of the next word. Every number drawn is one the trained coreference model "
    "computed in a single forward pass over the sentence.",
    sidebar="Sentence and layer",
    notes=lambda settings: [("Your sentence", problem)] if (problem := sentence_problem(settings)) else [],
    sections=[Section("pass", forward_pass), Section("parameters", parameters, title="Where the parameters are"),
              Section("embeddings", embeddings, part=BLOCK_EMBEDDINGS,
                      title="A real embedding table: all-MiniLM-L6-v2's"),
              Section("norms", norms, part=BLOCK_NORMS,
                      title="LayerNorm, not BatchNorm: the same activations, both ways"),
              Section("stacks", residual_trained, part=BLOCK_STACKS,
                      title="Why every sublayer has a residual connection: two depths, trained"),
              Section("sampling", sampling, part=BLOCK_SAMPLING,
                      title="From scores to a word: temperature, top-k, top-p and a seeded draw")],
    working=lambda settings: "Running the coreference model…",
    unavailable="The coreference model could not be loaded; the other pages work without it.",
)
