"""Review text: sentence splitting, tokenization, reading, batching, split."""

import json

import pytest

from attnkit.data.documents import (
    Vocabulary,
    document_from_text,
    make_document_batch,
    read_documents,
    split_sentences,
    stratified_split,
    tokenize,
)
from attnkit.data.parallel import DataError


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Love it!!! Great fit.", ["Love it!!!", "Great fit."]),
        ("Great quality.I love it", ["Great quality.", "I love it"]),
        ("Mr. Smith liked it. So did I", ["Mr. Smith liked it.", "So did I"]),
        ("Fits e.g. my mom. Nice", ["Fits e.g. my mom.", "Nice"]),
        ("first line\r\nsecond line", ["first line", "second line"]),
        ("Size 34.5 is ok. Yes", ["Size 34.5 is ok.", "Yes"]),
        ("So cute 😍😍 love", ["So cute 😍😍 love"]),
    ],
)
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_tokenize_keeps_review_tokens():
    assert tokenize("I'm 5'8\" and it's GREAT!!! 😍...") == [
        "i'm",
        "5'8\"",
        "and",
        "it's",
        "great",
        "!!!",
        "😍",
        "...",
    ]


def test_read_documents_errors_name_file_and_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"text": "ok", "label": 5}) + "\n{not json\n")
    with pytest.raises(DataError, match=r"r.jsonl:2: not a JSON object"):
        read_documents(path)
    path.write_text(json.dumps({"text": "ok", "label": 5}) + "\n" + json.dumps({"label": 1}) + "\n")
    with pytest.raises(DataError, match=r"r.jsonl:2: missing field 'text'"):
        read_documents(path)


def test_read_documents_custom_fields_and_csv(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('body,stars\n"Nice. Good",4\nBad,1\n')
    docs, labels = read_documents(path, text_field="body", label_field="stars", title_field="")
    assert labels == ["1", "4"] and [d.label for d in docs] == [1, 0]
    assert docs[0].sentences == [["nice", "."], ["good"]]


def test_document_batch_padding_and_masks():
    docs = [document_from_text("so good here. nice", 0), document_from_text("bad", 1)]
    vocab = Vocabulary.build(docs, min_freq=1)
    batch = make_document_batch(docs, vocab)
    assert batch.words.shape == (2, 2, 4)
    assert batch.word_mask[1].sum() == 1 and not batch.word_mask[1, 1].any()
    assert vocab.encode(["zzz"]) == [1]


def test_stratified_split_keeps_proportions_and_is_deterministic():
    labels = [0] * 80 + [1] * 20
    split = stratified_split(labels, seed=1)
    assert split == stratified_split(labels, seed=1)
    assert sorted(split["train"] + split["dev"] + split["test"]) == list(range(100))
    assert sum(labels[i] for i in split["test"]) == 2 and len(split["test"]) == 10


def test_stratified_folds_partition_with_class_proportions():
    from attnkit.data.documents import stratified_folds

    labels = [1] * 50 + [2] * 30 + [3] * 20
    folds = stratified_folds(labels, 5)
    assert sorted(i for f in folds for i in f) == list(range(100))
    for fold in folds:
        assert [sum(labels[i] == c for i in fold) for c in (1, 2, 3)] == [10, 6, 4]
    assert stratified_folds(labels, 5) == folds and stratified_folds(labels, 5, seed=1) != folds
    with pytest.raises(ValueError, match="k must be in 2..100"):
        stratified_folds(labels, 1)
