"""Re-make docs/screenshots: the explorer on the shipped models, in Chromium at 1400 x 900, as a designer
reviews it (the default, a long sentence, the layer views, encoder self-attention, classify, align short
and long, a black-on-white digit, a head report, a compare page).

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]

Needs chromium (apt-get install chromium) and playwright (the dev extra). Takes about a minute.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CAT = "The cat sits on the mat."
LONG = (
    "When the old man finally arrived at the station after walking for hours through the rain, he discovered "
    "that the last train had already left, so he sat down on a wooden bench, opened the small bag that his "
    "daughter had packed for him that morning, and ate the bread and cheese slowly while he watched the "
    "lights of the town go out one by one across the valley."
)
ALIGN_SRC = "the committee will now hear the report of the minister on the state of the roads in the north ."
ALIGN_TGT = "le comité va maintenant entendre le rapport du ministre sur l' état des routes dans le nord ."


def digit_png(folder: Path) -> Path:
    """A UCI digit drawn black on white (as a user scans one), 8 x 8 scaled to 64 x 64."""
    import numpy as np
    from PIL import Image
    from sklearn.datasets import load_digits

    digit = load_digits().images[3]  # a 3
    pixels = (255 - digit / 16.0 * 255).astype(np.uint8)
    path = folder / "three-black-on-white.png"
    Image.fromarray(pixels).resize((64, 64), Image.Resampling.NEAREST).save(path)
    return path


def heads_report(folder: Path) -> Path:
    out = folder / "heads.json"
    data = folder / "dev"
    data.mkdir()
    for side in ("src", "tgt"):
        shipped = subprocess.run(  # the shipped split's file (gzip)
            [sys.executable, "-m", "attnkit", "data", "tatoeba-eng-fra", "dev", "--side", side],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        (data / side).write_text(gzip.decompress(Path(shipped).read_bytes()).decode("utf-8"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "attnkit",
            "heads",
            "enfr-transformer",
            "--src",
            str(data / "src"),
            "--ref",
            str(data / "tgt"),
            "--limit",
            "20",
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return out


def translate(page, url: str, text: str, model: str | None = None) -> object:
    page.goto(f"{url}/#translate")
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#translate-input", text)
    if model:
        page.select_option("#translate-model", model)
    page.evaluate("document.getElementById('translate-results').replaceChildren()")
    page.click("#translate-run")
    return page.wait_for_selector(".translation-card")


def layer_views(page, url: str, out: Path) -> None:
    card = translate(page, url, CAT)
    card.query_selector(".layer-select").select_option("2")
    card.query_selector(".view-select").select_option("head")
    page.wait_for_function("c => c.dataset.drawn === '2/head'", arg=card)
    card.screenshot(path=str(out / "head-view.png"))
    card.query_selector(".view-select").select_option("model")
    page.wait_for_function("c => c.dataset.drawn.endsWith('/model')", arg=card)
    card.screenshot(path=str(out / "model-view.png"))
    card.query_selector(".which-select").select_option("encoder")
    page.wait_for_function("c => c.dataset.drawn.endsWith('/model/encoder')", arg=card)
    card.screenshot(path=str(out / "encoder-model-view.png"))


def other_views(page, url: str, out: Path, folder: Path) -> None:
    page.goto(f"{url}/#classify")
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#classify-input", "I love the colour. The fabric is thin and it runs small, so I returned it.")
    page.click("#classify-run")
    page.wait_for_selector(".classification-card")
    page.screenshot(path=str(out / "classify.png"), full_page=True)
    page.goto(f"{url}/#align")
    page.fill("#align-src", "the cat sits on the mat .")
    page.fill("#align-tgt", "le chat est assis sur le tapis .")
    page.fill("#align-gold", "1 1 1 S\n1 2 2 S\n1 3 3 P\n1 3 4 S\n1 4 5 S\n1 5 6 S\n1 6 7 S\n1 7 8 S")
    page.click("#align-run")
    page.wait_for_selector(".alignment-card")
    page.screenshot(path=str(out / "align.png"), full_page=True)
    page.goto(f"{url}/#align")  # a long pair, no gold
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#align-src", ALIGN_SRC)
    page.fill("#align-tgt", ALIGN_TGT)
    page.click("#align-run")
    page.wait_for_selector(".alignment-card")
    page.hover(".align-word.source[data-index='9']")
    page.screenshot(path=str(out / "align-long.png"), full_page=True)
    page.goto(f"{url}/#caption")
    page.set_input_files("#caption-file", str(digit_png(folder)))
    page.wait_for_function("() => document.getElementById('caption-picked').textContent")
    page.click("#caption-run")
    page.wait_for_selector(".caption-card").screenshot(path=str(out / "caption.png"))
    page.goto(f"{url}/#heads")
    page.set_input_files("#heads-file", str(heads_report(folder)))
    page.wait_for_selector(".heads-card")
    page.screenshot(path=str(out / "heads.png"), full_page=True)


def compare_page(page, out: Path, folder: Path) -> None:
    src = folder / "compare.en"
    src.write_text(f"{CAT}\nI would like a cup of coffee.\nWhere is the station?\n")
    page_file = folder / "compare.html"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "attnkit",
            "compare",
            "--model",
            "enfr-rnn",
            "--model",
            "enfr-transformer",
            "--src",
            str(src),
            "--html",
            str(page_file),
        ],
        check=True,
        capture_output=True,
    )
    page.goto(page_file.as_uri())
    page.wait_for_selector("body[data-ready=true]")
    page.screenshot(path=str(out / "compare.png"), full_page=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright
    from tests.helpers import serve_in_thread

    from attnkit.serve import ModelSet, create_app

    models = ModelSet(["enfr-transformer", "enfr-rnn"], ["reviews-han"], captioners=["digits-captioner"])
    url, running = serve_in_thread(create_app(models))
    # the layer views with self-attention need the torch checkpoint (the ONNX export returns cross-attention)
    torch_url, torch_running = serve_in_thread(
        create_app(ModelSet(["enfr-transformer"], [], backend="torch"))
    )
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        translate(page, url, CAT)
        page.screenshot(path=str(args.out / "translate.png"), full_page=True)
        translate(page, url, LONG)
        page.screenshot(path=str(args.out / "translate-long.png"), full_page=True)
        layer_views(page, torch_url, args.out)
        other_views(page, url, args.out, Path(tmp))
        compare_page(page, args.out, Path(tmp))
        browser.close()
    running.should_exit = torch_running.should_exit = True
    print(json.dumps(sorted(p.name for p in args.out.glob("*.png"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
