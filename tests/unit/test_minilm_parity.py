"""Our encoder, loaded with all-MiniLM-L6-v2's weights, against Hugging Face's own BertModel on the
same shipped files: the same word pieces, attention weights and last hidden states (to 1e-4).

`transformers` is a test-only dependency (requirements-test.txt); the app never imports it."""

import numpy as np
import pytest
import torch

from explorer.training.minilm import MAX_TOKENS, load_minilm, minilm_dir

transformers = pytest.importorskip("transformers", reason="transformers is pinned in requirements-test.txt")

SENTENCES = [
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
    "Café crème brûlée, naïve façade — Zürich’s Ångström!",  # accents, stripped by the normaliser
    "Robots 🤖 dream of electric sheep 🐑🐑 and emoji ✨",  # emoji: [UNK] in this vocabulary
    "Antidisestablishmentarianism and pneumonoultramicroscopicsilicovolcanoconiosis",  # many ##pieces
    "In 1969, 3.14159 × 2 = 6.28318; call +44 (0)20 7946 0958 at 10:45pm",  # numbers and symbols
    "東京 and Москва and Αθήνα",  # other scripts (CJK characters are split one by one)
    "",  # nothing: [CLS] [SEP] only
]


@pytest.fixture(scope="module")
def reference():
    directory = minilm_dir()
    tokenizer = transformers.BertTokenizerFast.from_pretrained(directory)
    model = transformers.BertModel.from_pretrained(directory, attn_implementation="eager").eval()
    return tokenizer, model


@pytest.mark.parametrize("text", SENTENCES)
def test_tokens_attention_and_hidden_states_match_bert(reference, text):
    tokenizer, model = reference
    ours = load_minilm()
    encoded = tokenizer(text, return_tensors="pt")
    theirs_tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])
    assert ours.tokenize(text) == theirs_tokens
    with torch.no_grad():
        out = model(**encoded, output_attentions=True)
    attention = ours.attention(text)
    expected = torch.stack(out.attentions, dim=1)[0].numpy()  # (layers, heads, T, T)
    assert attention.shape == expected.shape == (6, 12, len(theirs_tokens), len(theirs_tokens))
    np.testing.assert_allclose(attention, expected, atol=1e-4, rtol=0)
    np.testing.assert_allclose(ours.hidden(text), out.last_hidden_state[0].numpy(), atol=1e-4, rtol=0)


def test_a_cut_text_matches_bert_truncation(reference):
    tokenizer, model = reference
    text = " ".join(f"word{i}" for i in range(400))  # ~1 200 word pieces, far past 512
    ours = load_minilm()
    for limit in (16, MAX_TOKENS):
        encoded = tokenizer(text, truncation=True, max_length=limit, return_tensors="pt")
        assert ours.tokenize(text, limit) == tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])
        assert ours.encode(text, limit).cut > 0
    with torch.no_grad():
        out = model(**encoded, output_attentions=True)
    np.testing.assert_allclose(ours.hidden(text), out.last_hidden_state[0].numpy(), atol=1e-4, rtol=0)


def test_every_checkpoint_tensor_but_the_pooler_is_used():
    from safetensors import safe_open

    from explorer.training.minilm import parameter_names

    with safe_open(minilm_dir() / "model.safetensors", "pt") as f:
        names = set(f.keys())
    used = set(parameter_names(6).values())
    assert used <= names
    assert names - used == {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}
