"""The app's pages in one list: app.py builds the navigation from it, the home page links to every
entry, and the tests visit every entry.  Adding a lesson page means adding one line here.

The page scripts live in `app_pages/`, not `pages/`: a folder named `pages/` beside app.py makes
Streamlit start in its legacy multipage mode, and the first deep link after a restart (say
/lookup) would then run the page script on its own, without app.py's navigation and settings."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LESSONS", "PAGES", "PageInfo"]


@dataclass(frozen=True)
class PageInfo:
    path: str  # script path relative to the project root
    title: str
    url_path: str  # "" for the home page
    icon: str
    summary: str  # one line for the home page


PAGES = (
    PageInfo("app_pages/home.py", "Home", "", ":material/home:",
             "What the app teaches and where to start."),
    PageInfo("app_pages/lookup.py", "Attention as a lookup", "lookup", ":material/search:",
             "A query scores every key; softmax turns scores into weights; the answer mixes the values."),
    PageInfo("app_pages/attention.py", "Self-attention, masks and heads", "attention", ":material/grid_on:",
             "Trained models' attention, layer by layer and head by head, under any mask you choose."),
    PageInfo("app_pages/decoder.py", "The decoder at work", "decoder", ":material/keyboard_double_arrow_right:",
             "Generation one token at a time, teacher forcing, the KV cache, and the three architectures."),
    PageInfo("app_pages/positions.py", "Positional encodings", "positions", ":material/timeline:",
             "The encoding matrices, their geometry, and why attention is blind to order without them."),
    PageInfo("app_pages/gradients.py", "Gradient flow: loop vs attention", "gradients", ":material/trending_down:",
             "How much gradient reaches each input through the loop and through attention, and why it matters."),
    PageInfo("app_pages/depth.py", "Depth: residuals and Add & Norm", "depth", ":material/stacks:",
             "The gradient reaching each layer of a deep stack, with and without the residual short cut."),
    PageInfo("app_pages/train.py", "Train it live", "train", ":material/model_training:",
             "Train a transformer on this server and watch its attention form; race it against a GRU."),
    PageInfo("app_pages/cost.py", "Cost: size, operations, steps", "cost", ":material/timer:",
             "The lecture's complexity table counted exactly for your sizes, and a stopwatch on this CPU."),
    PageInfo("app_pages/real.py", "A real model: MiniLM", "real", ":material/model_training:",
             "all-MiniLM-L6-v2's 72 heads on any sentence, the “it” pair, and what its heads really do with “it”."),
    PageInfo("app_pages/encoders.py", "What encoders are for", "encoders", ":material/hub:",
             "Sentence vectors from MiniLM, similarity, semantic search against word overlap, attention sinks, "
             "and the BiRNN."),
    PageInfo("app_pages/length.py", "Length and memory", "length", ":material/memory:",
             "Past the trained length per encoding; the bytes attention costs; GQA, tiled attention, windows."),
)
LESSONS = tuple(p for p in PAGES if p.url_path)
