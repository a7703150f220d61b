"""The sharded job's folder (no Ray): plans, atomic shards, resume checks, refusals."""

import json

import pytest

from attnkit.engine.folder import Folder, Plan, digest
from attnkit.errors import UsageError


def plan(**change):
    values = {"task": "translate", "settings": {"beam": 5}, "digest": digest([["a", "b", "c"]])}
    values.update(n_items=5, shard_size=2)
    return Plan(**{**values, **change})


def test_bounds_cover_every_item_once():
    p = plan()
    assert p.n_shards == 3
    assert [p.bounds(k) for k in range(3)] == [(0, 2), (2, 4), (4, 5)]


def test_digest_tells_columns_and_order_apart():
    assert digest([["a", "b"]]) != digest([["b", "a"]])
    assert digest([["a"], ["b"]]) != digest([["a", "b"]])


def test_outputs_join_in_input_order(tmp_path):
    folder = Folder(tmp_path / "job", plan())
    for k, outs in [(2, ["e"]), (0, ["a", "b"]), (1, ["c", "d"])]:
        folder.write(k, outs)
    assert folder.done() == {0, 1, 2}
    assert folder.outputs() == ["a", "b", "c", "d", "e"]


def test_a_shard_with_the_wrong_count_is_a_bug(tmp_path):
    with pytest.raises(RuntimeError, match="shard 1: 1 outputs for 2 items"):
        Folder(tmp_path / "job", plan()).write(1, ["x"])


def test_a_folder_holding_files_is_refused_without_resume(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(UsageError, match="already holds files: give --resume"):
        Folder(tmp_path, plan())
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_resume_keeps_finished_shards(tmp_path):
    Folder(tmp_path / "job", plan()).write(0, ["a", "b"])
    again = Folder(tmp_path / "job", plan(), resume=True)
    assert again.done() == {0}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"settings": {"beam": 1}}, r"the options \(--beam\) differ"),
        ({"digest": digest([["other"]])}, "the input differ"),
        ({"shard_size": 3}, "--shard-size differ"),
        ({"task": "align"}, "the command differ"),
    ],
)
def test_resume_of_another_job_names_what_differs(tmp_path, change, named):
    Folder(tmp_path / "job", plan())
    with pytest.raises(UsageError, match=named):
        Folder(tmp_path / "job", plan(**change), resume=True)


def test_resume_needs_a_manifest(tmp_path):
    (tmp_path / "job").mkdir()
    with pytest.raises(UsageError, match="no manifest.json"):
        Folder(tmp_path / "job", plan(), resume=True)
    (tmp_path / "job" / "manifest.json").write_text("{not json")
    with pytest.raises(UsageError, match="cannot be read"):
        Folder(tmp_path / "job", plan(), resume=True)


def test_manifest_is_the_plan(tmp_path):
    Folder(tmp_path / "job", plan())
    saved = json.loads((tmp_path / "job" / "manifest.json").read_text())
    assert saved["n_items"] == 5 and saved["settings"] == {"beam": 5}


@pytest.mark.parametrize("content", [b'["a"', b"\xff\xfe", b'["a", "b", "c"]', b'{"a": 1}', b""])
def test_resume_computes_again_a_shard_that_is_not_finished(tmp_path, content, caplog):
    Folder(tmp_path / "job", plan()).write(0, ["a", "b"])
    (tmp_path / "job" / "shards" / "000000.json").write_bytes(content)  # truncated, bytes, edited
    again = Folder(tmp_path / "job", plan(), resume=True)
    assert again.done() == set()
    assert "is not a finished shard: computed again" in caplog.text
    with pytest.raises(UsageError, match="changed while the job ran"):
        again.outputs()


def test_a_shards_folder_that_cannot_be_made_names_the_option(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="--shards .*file/job"):
        Folder(tmp_path / "file" / "job", plan())


def test_evaluate_output_without_a_folder_is_refused_before_any_work(tmp_path, capsys):
    from attnkit.cli.main import main

    (tmp_path / "s").write_text("hi\n")
    argv = ["evaluate", "--model", "enfr-rnn", "--src", str(tmp_path / "s"), "--ref", str(tmp_path / "s")]
    assert main([*argv, "--output", str(tmp_path / "no" / "out.txt")]) == 2
    assert "no folder" in capsys.readouterr().err
