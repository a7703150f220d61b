"""``attnkit caption`` and ``evaluate-captioner`` as users run them: the JSON contract, the pictures, and
one clear line with exit code 2 for every input that is not a usable image."""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from attnkit.cli.main import main
from attnkit.datasets.digits import digit_strings


def _png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` (no pixel data: nothing big is ever built)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b""))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def digit_png(tmp_path_factory):
    path = tmp_path_factory.mktemp("img") / "digits.png"
    Image.fromarray(digit_strings("test", 1)[0].image).save(path)
    return path


def test_json_contract(captioner_ckpt, digit_png, capsys):
    assert main(["caption", str(digit_png), "--model", str(captioner_ckpt), "--json", "--beam", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"caption", "tokens", "attention", "image_size", "grid"}
    assert out["caption"] == " ".join(out["tokens"]) and len(out["attention"]) == len(out["tokens"])
    assert np.allclose(np.array(out["attention"]).sum((1, 2)), 1.0, atol=1e-3)


def test_plot_and_html_are_written(captioner_ckpt, digit_png, tmp_path, capsys):
    figure, page = tmp_path / "fig.svg", tmp_path / "page.html"
    args = [
        "caption",
        str(digit_png),
        "--model",
        str(captioner_ckpt),
        "--plot",
        str(figure),
        "--html",
        str(page),
    ]
    assert main(args) == 0
    assert figure.read_text().lstrip().startswith(("<?xml", "<svg"))
    html = page.read_text()
    assert '"view":"caption"' in html and "data:image/png;base64," in html


def test_rgba_and_sixteen_bit_images_are_converted(captioner_ckpt, tmp_path, capsys):
    glyphs = digit_strings("test", 1)[0].image
    rgba = np.dstack([glyphs, glyphs, glyphs, np.full_like(glyphs, 255)])
    Image.fromarray(rgba, "RGBA").save(tmp_path / "rgba.png")
    Image.fromarray(glyphs.astype(np.uint16) * 257).save(tmp_path / "deep.png")  # 16-bit grayscale
    Image.fromarray(glyphs).save(tmp_path / "gray.png")
    args = ["caption", *(str(tmp_path / n) for n in ("gray.png", "rgba.png", "deep.png"))]
    assert main([*args, "--model", str(captioner_ckpt), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[0]["attention"] == rows[1]["attention"] == rows[2]["attention"]  # the same pixels


@pytest.mark.parametrize(
    "content, message",
    [
        (b"this is not an image", "not an image Pillow can read"),
        ("truncated", "damaged or truncated"),
        ("tiny", "needs at least 8x8"),
        (_png_header(20000, 20000), "megapixels"),
    ],
)
def test_bad_images_get_one_line_and_exit_2(captioner_ckpt, digit_png, tmp_path, capsys, content, message):
    path = tmp_path / "bad.png"
    if content == "truncated":
        path.write_bytes(digit_png.read_bytes()[:200])
    elif content == "tiny":
        Image.fromarray(np.zeros((1, 1), np.uint8)).save(path)
    else:
        path.write_bytes(content)
    assert main(["caption", str(path), "--model", str(captioner_ckpt)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and str(path) in err and len(err.splitlines()) == 1


def test_missing_image_and_bad_options(captioner_ckpt, digit_png, tmp_path, capsys):
    assert main(["caption", str(tmp_path / "nope.png"), "--model", str(captioner_ckpt)]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert (
        main(["caption", str(digit_png), "--model", str(captioner_ckpt), "--beam", "2", "--n-best", "3"]) == 2
    )
    assert "--n-best" in capsys.readouterr().err
    assert (
        main(["caption", str(digit_png), "--model", str(captioner_ckpt), "--plot", str(tmp_path / "x.gif")])
        == 2
    )
    assert ".png, .svg or .pdf" in capsys.readouterr().err


def test_pictures_never_replace_an_input_image(captioner_ckpt, digit_png, tmp_path, capsys):
    before = digit_png.read_bytes()
    for flag in ("--plot", "--html"):
        assert main(["caption", str(digit_png), "--model", str(captioner_ckpt), flag, str(digit_png)]) == 2
        assert "would replace the input" in capsys.readouterr().err
    assert digit_png.read_bytes() == before


def test_evaluate_captioner_reports_scores_with_intervals(captioner_ckpt, capsys):
    args = ["evaluate-captioner", "--data", "digits:dev", "--limit", "12", "--model", str(captioner_ckpt)]
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["images"] == 12
    for key in ("exact_match", "token_accuracy", "attention_correctness"):
        low, high = report[f"{key}_ci"]
        assert 0.0 <= low <= report[key] <= high <= 1.0
    assert 0.02 < report["uniform_correctness"] < 0.08  # a digit's box is about 4% of the canvas
    assert main(["evaluate-captioner", "--data", "digits:train", "--model", str(captioner_ckpt)]) == 2
