"""Parallel text reading: normalization and errors that name the file and line."""

import gzip

import pytest

from attnkit.data.parallel import DataError, normalize, read_lines, read_parallel
from attnkit.datasets import parallel_split


def test_normalize_nfc_and_no_break_spaces():
    assert normalize("Qui est-ce\u202f?") == "Qui est-ce ?"
    assert normalize("«\u00a0oui\u00a0»") == "« oui »"
    assert normalize("cafe\u0301") == "café"


def test_tsv_reads_first_two_columns(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("Go.\tVa !\tCC-BY 2.0 attribution\nHi.\tSalut\u00a0!\n", encoding="utf-8")
    assert read_parallel(path) == (["Go.", "Hi."], ["Va !", "Salut !"])


@pytest.mark.parametrize(
    "content,problem",
    [
        (b"Go.\tVa !\nno tab here\n", "no tab"),
        (b"Go.\tVa !\n\t\xc3\xa7a\n", "empty source"),
        (b"Go.\tVa !\nHi.\t\xff\xfe\n", "invalid UTF-8"),
    ],
)
def test_malformed_tsv_names_file_and_line(tmp_path, content, problem):
    path = tmp_path / "bad.tsv"
    path.write_bytes(content)
    with pytest.raises(DataError, match=rf"bad.tsv:2: .*{problem}"):
        read_parallel(path)


def test_skip_bad_lines_counts_and_warns(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_bytes(b"Go.\tVa !\nno tab\nHi.\tSalut\n")
    with pytest.warns(UserWarning, match="skipped 1 bad lines"):
        src, _ = read_parallel(path, skip_bad_lines=True)
    assert src == ["Go.", "Hi."]


def test_aligned_files_of_different_lengths(tmp_path):
    (tmp_path / "a.en").write_text("a\nb\n")
    (tmp_path / "a.fr").write_text("a\n")
    with pytest.raises(DataError, match="a.en has 2 lines but .*a.fr has 1"):
        read_parallel(tmp_path / "a.en", tmp_path / "a.fr")


def test_aligned_empty_line_names_the_file(tmp_path):
    (tmp_path / "a.en").write_text("a\n\n")
    (tmp_path / "a.fr").write_text("a\nb\n")
    with pytest.raises(DataError, match=r"a.en:2: empty"):
        read_parallel(tmp_path / "a.en", tmp_path / "a.fr")


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_lines(tmp_path / "nope.txt")


def test_shipped_split_is_complete_and_aligned():
    sizes = {}
    for split in ("train", "dev", "test"):
        src, tgt = parallel_split("tatoeba-eng-fra", split)
        with gzip.open(src, "rt", encoding="utf-8") as a, gzip.open(tgt, "rt", encoding="utf-8") as b:
            sizes[split] = (sum(1 for _ in a), sum(1 for _ in b))
    assert sizes == {"train": (161113, 161113), "dev": (2000, 2000), "test": (2000, 2000)}
    with pytest.raises(
        ValueError, match="valid names: tatoeba-deu-eng, tatoeba-eng-deu, tatoeba-eng-fra, tatoeba-fra-eng"
    ):
        parallel_split("wmt14", "train")


def test_shipped_eng_deu_split_matches_its_split_md_and_keeps_dev_test_english_out_of_train():
    import hashlib
    import re

    folder = parallel_split("tatoeba-eng-deu", "train")[0].parent
    table = dict(
        re.findall(r"\| `(\w+\.\w+)` \| [\d,]+ \| `([0-9a-f]{64})` \|", (folder / "SPLIT.md").read_text())
    )
    assert len(table) == 6
    english = {}
    for split in ("train", "dev", "test"):
        for path in parallel_split("tatoeba-eng-deu", split):
            with gzip.open(path, "rb") as handle:
                data = handle.read()
            assert hashlib.sha256(data).hexdigest() == table[path.name[:-3]]
            if path.name.startswith(f"{split}.en"):
                english[split] = set(data.decode("utf-8").splitlines())
    assert len(english["dev"]) == len(english["test"]) == 2000
    assert not (english["dev"] | english["test"]) & english["train"]
    assert not english["dev"] & english["test"]
