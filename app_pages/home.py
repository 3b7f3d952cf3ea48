"""Home: what the app teaches, and a link to every lesson."""

import streamlit as st

from explorer.kit.controls import UrlControls
from explorer.kit.present import present_setting, style_page
from explorer.lessons import LESSONS

style_page()
st.title("Attention Explorer")
controls = UrlControls()
present_setting(controls)  # presentation mode, app-wide: `?present=1` turns it on here as in the lessons
controls.report()  # any other setting in a link gets a note: the home page has none
st.markdown(
    """
A recurrent network reads a sequence the way we read a sentence aloud: one token at a time, carrying
a running summary forward. A transformer layer instead computes all of its outputs at once, each one
a direct function of the inputs it is allowed to see (a decoder still writes new tokens one at a
time, one pass each, as the decoder lesson shows). That single change — **attention** in place of the
loop — lets a transformer train on every position of a sequence at once, and gives each output a
path of one attention step to every input it may see. The lecture notes add that this is why
transformers learn long-range dependencies that RNNs lose; the lessons measure that rather than
assume it. Trained with long gaps, this project's RNN, GRU and LSTM each carried a letter across
512 steps (pretrained/recall-experiments.md), and a transformer trained on short inputs fails on
longer ones (the length lesson).

Almost every figure here is computed live, on this machine's CPU, from small models you can poke
at: change a control and the numbers are recomputed on the spot. The exception says so where it is
shown: how MiniLM's heads treat "it" over a thousand sentences was computed once and ships with the
app, with the command that redoes it. Each view has its own link, so the address bar always reopens
exactly what you see.
"""
)

st.subheader("Lessons")
for page in LESSONS:
    with st.container(border=True):
        st.page_link(page.path, label=page.title, icon=page.icon)
        st.caption(page.summary)
