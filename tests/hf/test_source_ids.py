"""Hugging Face inputs exactly as the tokenizer makes them, for the families whose end ids are more than
one ``</s>`` (mBART legacy), whose target starts with a forced language token (M2M100, mBART) or whose
source has its own vocabulary (FSMT): the model reads the tokenizer's ids, the attention has one column
per one of them, and the translation text holds no language token. Each failed before issue 40's fix."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from attnkit.api import load_translator  # noqa: E402
from tests.hf import families  # noqa: E402

TEXTS = ["the cat sits on the mat", " the cat", "the\u00a0cat sits", "where  is the dog "]


@pytest.fixture(scope="module", params=sorted(families.FAMILIES))
def family(request, tmp_path_factory):
    import transformers

    folder = families.FAMILIES[request.param](tmp_path_factory.mktemp(request.param))
    return request.param, load_translator(str(folder)), transformers.AutoTokenizer.from_pretrained(folder)


def test_the_model_reads_the_tokenizers_ids_and_the_attention_has_a_column_for_each(family):
    name, translator, tokenizer = family
    for text, r in zip(TEXTS, translator.translate(TEXTS, beam=2)):
        ids = list(tokenizer(text)["input_ids"])
        assert r.source_ids + translator.source_suffix == ids, (name, text)
        assert r.attention.shape == (len(r.target_tokens), len(ids))
        if name != "fsmt":
            assert r.source_tokens == tokenizer.convert_ids_to_tokens(ids)
    [(src, _, matrix)] = translator.forced_attention([TEXTS[0]], ["le chat"])
    assert len(src) == matrix.shape[1] == len(tokenizer(TEXTS[0])["input_ids"])


def test_the_forced_language_token_is_never_in_the_translation_text(family):
    name, translator, tokenizer = family
    forced = translator.model.generation_config.forced_bos_token_id
    if forced is None:
        pytest.skip(f"{name} forces no language token")
    language = tokenizer.convert_ids_to_tokens(forced)
    for r in translator.translate(TEXTS, beam=1):
        assert r.target_tokens[0] == language and language not in r.translation


def test_fsmt_source_words_are_read_from_the_source_vocabulary(family):
    name, translator, _ = family
    if name != "fsmt":
        pytest.skip("one vocabulary")
    [r] = translator.translate(["the cat sits on the mat"], beam=1)
    assert r.source_tokens == ["the</w>", "cat</w>", "sits</w>", "on</w>", "the</w>", "mat</w>", "</s>"]
