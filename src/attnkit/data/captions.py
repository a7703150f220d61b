"""Captioning data a user brings: an image folder and its captions, in the two common layouts.

- Flickr8k style: a text file of ``IMAGE#N<TAB>caption`` lines (``#N`` optional; one line per caption),
  e.g. Flickr8k.token.txt;
- COCO style: a JSON file ``{"images": [{"id", "file_name"}], "annotations": [{"image_id", "caption"}]}``.

Image names resolve against ``image_dir`` (default: the captions file's folder). Captions are lower-cased
and split into words (letters, digits, apostrophes); each caption of an image is one training example.
Every problem is one line naming the file and line (or field).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError

WORD = re.compile(r"[a-z0-9']+")


@dataclass(frozen=True)
class CaptionedImage:
    path: Path
    captions: tuple[tuple[str, ...], ...]  # each caption as words


def words(caption: str) -> tuple[str, ...]:
    return tuple(WORD.findall(caption.lower()))


def _flickr(path: Path, text: str) -> dict[str, list[tuple[str, ...]]]:
    found: dict[str, list[tuple[str, ...]]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if "\t" not in line:
            raise DataError(f"{path}:{number}: expected IMAGE#N<TAB>caption, got {line[:60]!r}")
        name, caption = line.split("\t", 1)
        if not words(caption):
            raise DataError(f"{path}:{number}: the caption has no words")
        found.setdefault(name.split("#", 1)[0].strip(), []).append(words(caption))
    return found


def _coco(path: Path, text: str) -> dict[str, list[tuple[str, ...]]]:
    try:
        data = json.loads(text)
        names = {int(i["id"]): str(i["file_name"]) for i in data["images"]}
        pairs = [(int(a["image_id"]), str(a["caption"])) for a in data["annotations"]]
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(
            f"{path}: a COCO captions file needs images[].id/file_name and annotations[].image_id/caption "
            f"({type(exc).__name__}: {exc})"
        ) from None
    found: dict[str, list[tuple[str, ...]]] = {}
    for image_id, caption in pairs:
        if image_id not in names:
            raise DataError(f"{path}: annotation for image_id {image_id}, which is not in images")
        found.setdefault(names[image_id], []).append(words(caption))
    return found


def read_captions(path: str | Path, image_dir: str | Path | None = None) -> list[CaptionedImage]:
    """The images of a captions file (either layout, told apart by a leading ``{``) with their captions."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None
    found = _coco(path, text) if text.lstrip().startswith("{") else _flickr(path, text)
    if not found:
        raise DataError(f"{path}: no captions")
    folder = Path(image_dir) if image_dir is not None else path.parent
    images = []
    for name, captions in found.items():
        image = folder / name
        if not image.is_file():
            raise DataError(f"{path}: image {name!r} is not in {folder}")
        images.append(CaptionedImage(image, tuple(c for c in captions if c)))
    return images
