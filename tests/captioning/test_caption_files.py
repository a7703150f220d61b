"""A user's captioned images in the Flickr8k and COCO layouts: read, checked, and trained on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnkit.data.captions import read_captions
from attnkit.errors import DataError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "captions"


def test_both_layouts_give_the_same_images_and_words():
    flickr = read_captions(FIXTURES / "captions.txt")
    coco = read_captions(FIXTURES / "captions.json")
    assert [i.path.name for i in flickr] == [i.path.name for i in coco] == [f"img{k}.png" for k in range(4)]
    for a, b in zip(flickr, coco):
        assert a.captions[0] == a.captions[1] == b.captions[0]  # lower-cased, punctuation dropped
        assert 2 <= len(b.captions[0]) <= 6


def test_problems_name_the_file_and_line(tmp_path):
    bad = tmp_path / "captions.txt"
    bad.write_text("img0.png#0\tone two\nno tab here\n")
    with pytest.raises(DataError, match=r"captions.txt:2: expected IMAGE#N<TAB>caption"):
        read_captions(bad, FIXTURES)
    bad.write_text("missing.png#0\tone two\n")
    with pytest.raises(DataError, match="image 'missing.png' is not in"):
        read_captions(bad)
    coco = tmp_path / "c.json"
    coco.write_text(json.dumps({"images": [{"id": 1, "file_name": "img0.png"}], "annotations": [{"id": 1}]}))
    with pytest.raises(DataError, match="annotations"):
        read_captions(coco, FIXTURES)


def test_a_captioner_trains_on_a_captions_file(tmp_path, capsys):
    from attnkit.api import train
    from attnkit.captioner import Captioner
    from attnkit.config import load_config

    sets = [
        f"data.train=[{FIXTURES / 'captions.txt'}]",
        f"data.dev=[{FIXTURES / 'captions.json'}]",
        "data.batch_images=4",
        "model.captioner.conv_channels=[4, 8]",
        "model.captioner.hidden_size=16",
        "model.captioner.embed_size=8",
        "model.captioner.attention_size=8",
        "training.max_steps=3",
        "training.validate_every=3",
        f"training.out_dir={tmp_path / 'run'}",
    ]
    assert train(load_config("digits-captioner", sets)) == "max_steps"
    captioner = Captioner.from_checkpoint(tmp_path / "run" / "best.pt")
    assert set(captioner.words[4:]) <= {
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
    }
    result = captioner.caption_files([FIXTURES / "img0.png"])[0]
    assert result.attention.shape[1:] == (6, 24)
