"""explorer.training.minilm beyond parity: the files are checked before they are parsed, a missing
or damaged package raises MiniLMError with a way out, the model is loaded once, and long texts are
cut as documented.  Also: the shipped "it" measurement is what the code computes today."""

import json
import shutil

import numpy as np
import pytest

import explorer
import explorer.training.minilm as minilm
from explorer.analysis.referent import REFERENT_FILE, coreference_sentences, referent_report
from explorer.training.pretrained import PretrainedModelError

FILES = ("config.json", "tokenizer.json", "model.safetensors")


@pytest.fixture
def model_copy(tmp_path):
    copy = tmp_path / "model"
    copy.mkdir()
    for name in FILES:
        shutil.copy(minilm.minilm_dir() / name, copy / name)
    return copy


def flip_a_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_exported_and_loaded_once_per_process():
    model = explorer.load_minilm()
    assert model is explorer.load_minilm() is minilm.load_minilm(minilm.minilm_dir())
    assert model.model_dir == minilm.minilm_dir()
    assert model.parameters == 22_565_376  # 22.7 M of the checkpoint, less the unused pooler (147 840)
    assert 0 < model.load_seconds < 60


def test_an_intact_copy_loads_from_any_folder(model_copy):
    model = minilm.MiniLM(model_copy)
    text = "Attention is all you need."
    np.testing.assert_array_equal(model.attention(text), explorer.load_minilm().attention(text))


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("damage", ["changed", "truncated", "missing"])
def test_a_damaged_file_raises_a_clear_error_before_parsing(model_copy, name, damage):
    path = model_copy / name
    if damage == "changed":
        flip_a_byte(path)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    else:
        path.unlink()
    with pytest.raises(minilm.MiniLMError) as error:
        minilm.load_minilm(model_copy)
    message = str(error.value)
    assert name in message and "git checkout -- pretrained/all-MiniLM-L6-v2" in message
    assert isinstance(error.value, PretrainedModelError)  # pages that catch broken models catch this too


def test_a_missing_folder_says_how_to_restore_it(monkeypatch, tmp_path):
    monkeypatch.setattr(minilm, "MODEL_DIR", tmp_path / "gone")
    with pytest.raises(minilm.MiniLMError, match=r"missing.*git checkout -- pretrained/all-MiniLM-L6-v2"):
        minilm.load_minilm()


def test_files_that_match_their_hashes_but_not_the_code_are_reported(model_copy, monkeypatch):
    config = json.loads((model_copy / "config.json").read_text())
    bad = json.dumps({**config, "hidden_act": "relu"}).encode()
    (model_copy / "config.json").write_bytes(bad)
    monkeypatch.setitem(minilm.SHA256, "config.json", minilm.hashlib.sha256(bad).hexdigest())
    with pytest.raises(minilm.MiniLMError, match=r"do not fit together.*hidden_act"):
        minilm.MiniLM(model_copy)


def test_long_texts_are_cut_at_the_end_keeping_sep():
    model = explorer.load_minilm()
    encoded = model.encode("one two three four five six seven", max_tokens=5)
    assert encoded.tokens == ["[CLS]", "one", "two", "three", "[SEP]"] and encoded.cut == 4
    assert model.attention("one two three four five six seven", 5).shape == (6, 12, 5, 5)
    assert model.hidden("x " * 2000).shape == (512, 384)  # never past the position table
    with pytest.raises(ValueError):
        model.encode("a", max_tokens=600)


def test_position_table_is_the_models_own():
    model = explorer.load_minilm()
    table = model.position_table()
    assert table.shape == (512, 384)
    assert np.shares_memory(table, model.encoder.position.table.numpy())
    with pytest.raises(ValueError):
        table[0, 0] = 1.0  # the model is shared: its table cannot be changed through this view


def test_shipped_referent_scores_are_what_the_code_measures():
    shipped = json.loads(REFERENT_FILE.read_text())
    fresh = referent_report()
    for key in ("right_above_other", "right_above_other_when_subject", "right_above_other_when_object",
                "mean_weight_right", "mean_weight_other"):
        np.testing.assert_allclose(fresh[key], shipped[key], atol=1.5e-4, err_msg=key)
    assert [(b["layer"], b["head"]) for b in fresh["best_heads"]] == \
        [(b["layer"], b["head"]) for b in shipped["best_heads"]]
    assert shipped["sentences"] == 1000 and 450 < shipped["about_subject"] < 550


def test_the_sentences_name_the_right_nouns():
    sentences = coreference_sentences()
    assert len(sentences) == 1000
    lecture = [s for s in sentences if s.words[1] == "animal" and s.words[-1] in ("tired", "wide")]
    assert lecture
    for s in lecture:
        assert s.words[s.referent] == ("animal" if s.words[-1] == "tired" else s.words[5])
    assert all(s.words.count("it") == 1 and s.referent != s.other for s in sentences)
