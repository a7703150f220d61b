"""Models and datasets live outside the wheel: an index of their files with SHA-256, found in the
package's folder or fetched by name into a cache, verified, never half-written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from attnkit import store
from attnkit.cli.main import main
from attnkit.errors import NotFoundError, UsageError

SRC = Path(store.__file__).resolve().parent


def test_the_index_lists_every_shipped_file_with_its_size():
    """A re-shipped model must re-make assets.json (store.write_index), or this fails."""
    assets = store.index()
    for kind in store.KINDS:
        for folder in (SRC / kind).iterdir():
            if not folder.is_dir() or folder.name == "__pycache__":
                continue
            files = {
                str(f.relative_to(folder)): f.stat().st_size
                for f in folder.rglob("*")
                if f.is_file() and "__pycache__" not in f.parts
            }
            listed = assets[f"{kind}/{folder.name}"]["files"]
            assert {k: v["size"] for k, v in listed.items()} == files, folder.name


def test_the_index_checksums_match_the_small_files():
    for key, asset in store.index().items():
        for relative, meta in asset["files"].items():
            if meta["size"] < 2_000_000:
                assert store.sha256(SRC / key / relative) == meta["sha256"], f"{key}/{relative}"


@pytest.fixture
def bare_install(tmp_path, monkeypatch):
    """A package folder without models or datasets (as a wheel installs it) and an empty cache."""
    monkeypatch.setattr(store, "PACKAGE", tmp_path / "package")
    monkeypatch.setenv("ATTNKIT_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTNKIT_SOURCE", raising=False)
    from attnkit import pretrained

    monkeypatch.setattr(pretrained, "ROOT", tmp_path / "package" / "pretrained")
    return tmp_path


def test_a_model_not_installed_says_how_to_fetch_it(bare_install, capsys):
    with pytest.raises(NotFoundError, match="attnkit fetch fren-rnn --from SOURCE"):
        store.folder("pretrained", "fren-rnn")
    assert main(["translate", "--model", "fren-rnn", "Bonjour."]) == 2
    assert "not installed" in capsys.readouterr().err
    with pytest.raises(UsageError, match="give --from SOURCE"):
        store.fetch("fren-rnn")


def test_fetch_from_a_folder_verifies_and_installs(bare_install, capsys):
    assert main(["fetch", "fren-rnn", "tatoeba_eng_fra", "--from", str(SRC)]) == 0
    cached = bare_install / "cache" / "pretrained" / "fren-rnn"
    assert (cached / "model.pt").is_file() and (cached / "onnx" / "manifest.json").is_file()
    from attnkit.datasets import parallel_split
    from attnkit.pretrained import shipped

    assert shipped() == {"fren-rnn": cached / "model.pt"}
    assert (
        parallel_split("tatoeba-eng-fra", "dev")[0].parent
        == bare_install / "cache" / "datasets" / "tatoeba_eng_fra"
    )
    assert main(["translate", "--model", "fren-rnn", "--json", "Le chat dort."]) == 0
    assert "The cat" in capsys.readouterr().out


def test_a_file_that_fails_its_checksum_is_refused_and_nothing_is_left(bare_install):
    source = bare_install / "mirror"
    shutil.copytree(SRC / "datasets" / "tatoeba_eng_deu", source / "datasets" / "tatoeba_eng_deu")
    (source / "datasets" / "tatoeba_eng_deu" / "dev.de.gz").write_bytes(b"tampered")
    with pytest.raises(UsageError, match="does not match its SHA-256"):
        store.fetch("tatoeba_eng_deu", str(source))
    datasets = bare_install / "cache" / "datasets"
    assert not datasets.exists() or not any(datasets.iterdir())


def test_unknown_names_list_the_valid_ones(bare_install):
    with pytest.raises(UsageError, match="valid: .*enfr-rnn"):
        store.fetch("enfr-rnm", str(SRC))


def test_a_copy_fetched_before_the_lexical_tables_is_completed_and_align_says_what_is_missing(
    bare_install, capsys
):
    """The default aligner reads its dataset's lexical tables: without them it aligns on and says so in
    one line; an explicit --lexical is refused with how to fetch them; fetch completes an older copy."""
    assert main(["fetch", "enfr-rnn", "fren-rnn", "tatoeba_eng_fra", "--from", str(SRC)]) == 0
    tables = bare_install / "cache" / "datasets" / "tatoeba_eng_fra" / "lexical.npz"
    tables.unlink()  # as a copy fetched before the tables existed
    (bare_install / "s.en").write_text("the cat sleeps\n")
    (bare_install / "s.fr").write_text("le chat dort\n")
    files = ["--src", str(bare_install / "s.en"), "--tgt", str(bare_install / "s.fr")]
    capsys.readouterr()
    assert main(["align", *files, "--scores", "attention", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "lexical tables of tatoeba-eng-fra are not installed (attnkit fetch tatoeba_eng_fra --from" in err
    assert main(["align", *files, "--scores", "attention", "--lexical", "0.6"]) == 2
    assert "not installed" in capsys.readouterr().err
    with pytest.raises(UsageError, match="lexical.npz is missing: give --from SOURCE"):
        store.fetch("tatoeba_eng_fra")
    assert store.fetch("tatoeba_eng_fra", str(SRC)) == tables.parent and tables.is_file()
    assert main(["align", *files, "--scores", "attention", "--lexical", "0.6"]) == 0
