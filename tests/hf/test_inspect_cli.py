"""``attnkit inspect``: the JSON the issue names, the page, the picture, the notebook view, and bad input
(one line, exit 2): out-of-range indices, a text past the model's positions, a translator or classifier
given to it, a missing or undecodable file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnkit.cli.main import main
from tests.hf import causal_families

TEXT = "the cat sits on the mat . where is the dog ? i like tea . " * 6


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return str(causal_families.build("llama", tmp_path_factory.mktemp("llama")))


def test_json_has_tokens_captured_rows_and_received_per_layer(llama, capsys):
    assert (
        main(
            ["inspect", "--model", llama, TEXT, "--rows", "-4:", "--heads", "0,2", "--layers", ":", "--json"]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    t = len(data["tokens"])
    assert len(data["received"]) == data["layers"] == 2 and all(len(r) == t for r in data["received"])
    assert all(sum(r) == pytest.approx(1.0, abs=1e-3) for r in data["received"])
    assert {(c["layer"], c["head"]) for c in data["captured"]} == {(0, 0), (0, 2), (1, 0), (1, 2)}
    for c in data["captured"]:
        assert c["rows"] == list(range(t - 4, t)) and np.shape(c["weights"]) == (4, t)
        assert all(sum(row) == pytest.approx(1.0, abs=1e-3) for row in c["weights"])
    assert {h["role"] for h in data["head_stats"]} <= {
        "induction",
        "previous-token",
        "sink",
        "local",
        "broad",
        "mixed",
    }
    assert len(data["head_stats"]) == 2 * 4 and data["kv_heads"] == 2


def test_generate_appends_tokens_and_captures_their_rows(llama, capsys):
    assert main(["inspect", "--model", llama, "the cat", "--generate", "5", "--json", "--no-probe"]) == 0
    data = json.loads(capsys.readouterr().out)
    generated = len(data["tokens"]) - data["prompt_tokens"]
    assert 1 <= generated <= 5
    assert data["captured"][0]["rows"] == list(range(data["prompt_tokens"] - 1, len(data["tokens"]) - 1))
    assert all(h["induction"] is None for h in data["head_stats"])


def test_the_page_the_picture_and_the_summary(llama, tmp_path, capsys):
    page, picture = tmp_path / "context.html", tmp_path / "context.png"
    assert main(["inspect", "--model", llama, TEXT, "--html", str(page)]) == 0
    assert 'id="attnkit-data"' in page.read_text() and "showContext" in page.read_text()
    assert main(["inspect", "--model", llama, TEXT, "--plot", str(picture), "--no-probe"]) == 0
    assert picture.read_bytes().startswith(b"\x89PNG")
    assert main(["inspect", "--model", llama, TEXT, "--no-probe"]) == 0
    out = capsys.readouterr().out
    assert "2 layers x 4 heads (2 key heads)" in out and out.count("layer ") >= 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rows", "500"], "rows 500 is out of range: rows must be in 0.."),
        (["--layers", "2"], "layers 2 is out of range: layers must be in 0..1"),
        (["--heads", "0:x"], "heads '0:x': expected indices and slices"),
        (["--generate", "-1"], "--generate must be in 0..4096"),
    ],
)
def test_bad_options_are_one_line(llama, capsys, argv, message):
    assert main(["inspect", "--model", llama, "the cat sits on the mat", "--no-probe", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_text_past_the_positions_and_models_that_are_not_language_models(llama, tmp_path, capsys):
    long_gpt2 = causal_families.build("gpt2", tmp_path / "gpt2")
    assert main(["inspect", "--model", str(long_gpt2), TEXT * 10, "--no-probe"]) == 2
    assert "reads at most 256 positions" in capsys.readouterr().err
    assert main(["inspect", "--model", "enfr-rnn", "the cat"]) == 2
    assert (
        "enfr-rnn is a translation model; attnkit inspect reads decoder-only language models"
        in capsys.readouterr().err
    )
    assert main(["inspect", "--model", "reviews-han", "the cat"]) == 2
    assert "(for this one: attnkit classify)" in capsys.readouterr().err
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9\n".encode("latin-1"))
    assert main(["inspect", "--model", llama, "--file", str(bad)]) == 2
    assert f"{bad}:1: invalid UTF-8" in capsys.readouterr().err
    assert main(["inspect", "--model", llama]) == 2
    assert "give a TEXT or --file FILE" in capsys.readouterr().err


def test_the_notebook_shows_the_long_context_view(llama):
    import attnkit

    result = attnkit.inspect(llama, TEXT, probe=False)
    frame = result._repr_html_()
    assert "attnkit-context" in frame and "srcdoc" in frame
