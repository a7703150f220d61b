"""What one request may ask for, checked field by field and item by item before anything is batched.

A bad item (a lone surrogate, an empty document, an over-long sentence) fails its own request with a
4xx naming the field and the item; it never reaches a model call shared with other clients. The cost
of a request is bounded before it runs: sentences x beam x words (the decoding work) and, when layer
attention is asked for, the attention cells the answer would carry (its size).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import AttnkitError, shorten


class RequestError(AttnkitError):
    """A request the server refuses: ``status`` is the HTTP code (400 malformed, 413 too large, 415
    not JSON, 422 well-formed but over a limit or not usable)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Limits:
    """The limits the README states and ``/api/models`` reports."""

    max_body_bytes: int = 256 * 1024
    max_items: int = 64  # sentences, documents or pairs per request
    max_beam: int = 10
    max_words: int = 100  # words per sentence to translate or align (whitespace-separated)
    max_chars: int = 1_000  # characters per sentence to translate or align
    max_document_chars: int = 20_000  # characters per document to classify
    max_work: int = 4_000  # sum over sentences of words x beam: the decoding work of one request
    max_layer_cells: int = 400_000  # estimated attention cells (T x S x layers x heads) with layers: true
    heavy_work: int = 400  # from this work (or heavy_chars of documents) a request runs in the heavy lane
    heavy_chars: int = 8_000
    max_images: int = 8  # images per caption request (each a data URL or base64 string in the JSON body)
    max_context_tokens: int = 4096  # tokens of one /api/inspect text (a causal LM's long-context view)
    max_context_cells: int = 400_000  # captured weights (layers x heads x rows x tokens) one answer carries

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once: a repeated one is refused (JSON keeps the last,
    silently, and a proxy or a log may read the first)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise RequestError(400, f"field {shorten(key, 40)} is given twice")
        seen[key] = value
    return seen


def read_body(body: bytes, limits: Limits) -> dict[str, Any]:
    """The JSON object of a request body; malformed, too deep or not an object -> 400."""
    if len(body) > limits.max_body_bytes:
        raise RequestError(413, f"body is over the limit of {limits.max_body_bytes} bytes")
    try:
        data = json.loads(body, object_pairs_hook=_no_repeats)
    except RequestError:
        raise
    except UnicodeDecodeError:
        raise RequestError(400, "body is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise RequestError(400, f"body is not valid JSON: {e.msg} at character {e.pos}") from None
    except RecursionError:
        raise RequestError(400, "body is nested too deeply to be a request") from None
    except ValueError as e:  # a number of more digits than Python converts (sys.get_int_max_str_digits)
        digits = str(e).split("value has ", 1)[-1].split(" digits", 1)[0]
        said = f"{digits} digits" if digits.isdigit() else "too many digits"
        raise RequestError(400, f"body holds a number of {said}; a request's have at most 4,300") from None
    if not isinstance(data, dict):
        raise RequestError(400, "body must be a JSON object")
    return data


def text_item(value: Any, field: str, index: int, max_chars: int) -> str:
    """One string of a list field, checked on its own: a string, valid Unicode, not too long."""
    where = f"field {field!r}: item {index}"
    if not isinstance(value, str):
        raise RequestError(400, f"{where} must be a string, got {shorten(value, 40)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise RequestError(
            400, f"{where} is not valid Unicode (a lone surrogate at character {e.start})"
        ) from None
    if len(value) > max_chars:
        raise RequestError(422, f"{where} has {len(value)} characters; at most {max_chars}")
    return value


def strings(data: dict[str, Any], field: str, limits: Limits, max_chars: int) -> list[str]:
    value = data.get(field)
    if value is None:
        raise RequestError(400, f"field {field!r} is missing: give a list of strings")
    if not isinstance(value, list):
        raise RequestError(400, f"field {field!r} must be a list of strings")
    if not value:
        raise RequestError(400, f"field {field!r} is empty")
    if len(value) > limits.max_items:
        raise RequestError(
            422, f"field {field!r} has {len(value)} items; at most {limits.max_items} per request"
        )
    return [text_item(v, field, i, max_chars) for i, v in enumerate(value)]


def sentences(data: dict[str, Any], field: str, limits: Limits) -> list[str]:
    """A list of sentences to translate or align, each within ``max_chars`` and ``max_words``."""
    found = strings(data, field, limits, limits.max_chars)
    for i, s in enumerate(found):
        if len(s.split()) > limits.max_words:
            raise RequestError(
                422, f"field {field!r}: item {i} has {len(s.split())} words; at most {limits.max_words}"
            )
    return found


def integer(data: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = data.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise RequestError(
            400, f"field {name!r} must be an integer in {low}..{high}, got {shorten(value, 40)}"
        )
    return value


def number(data: dict[str, Any], name: str, low: float, high: float) -> float | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high:
        raise RequestError(400, f"field {name!r} must be a number in {low}..{high}, got {shorten(value, 40)}")
    return float(value)


def boolean(data: dict[str, Any], name: str) -> bool:
    value = data.get(name, False)
    if not isinstance(value, bool):
        raise RequestError(400, f"field {name!r} must be true or false, got {shorten(value, 40)}")
    return value


def units(text: str) -> int:
    """What a sentence costs to decode, in words or, for text with few spaces, characters / 6 (about a
    subword each): 1,000 letters without a space are ~167 units, not one word."""
    return max(len(text.split()), len(text) // 6 + 1)


def work(texts: list[str], beam: int = 1) -> int:
    """The decoding work of a request: the sum over its sentences of units (``units``) x beam."""
    return sum(units(t) * beam for t in texts)


def check_translate_cost(texts: list[str], beam: int, layer_maps: int, limits: Limits) -> None:
    """Refuse (422) a request whose decoding work or layer-attention answer is over the limits.

    ``layer_maps``: layers x heads the answer would carry per sentence (0 when not asked for). Subwords
    are estimated as 1.5 per word plus </s>, on both sides."""
    words = [units(t) for t in texts]
    work = sum(w * beam for w in words)
    if work > limits.max_work:
        raise RequestError(
            422,
            f"request too costly: sentences x words (or characters / 6) x beam = {work}, over the limit of "
            f"{limits.max_work} "
            "(send fewer or shorter sentences, or a smaller beam)",
        )
    cells = sum(int(1.5 * w + 1) ** 2 for w in words) * layer_maps
    if cells > limits.max_layer_cells:
        raise RequestError(
            422,
            f"layer attention for these sentences is about {cells} values, over the limit of "
            f"{limits.max_layer_cells} (ask for layers: true on fewer or shorter sentences)",
        )


def image_list(data: dict[str, Any], field: str, limits: Limits) -> list[bytes]:
    """Field ``field``: 1..max_images images, each a ``data:image/...;base64,`` URL or plain base64 ->
    their bytes (whether they are images is checked when they are decoded, item by item)."""
    import base64
    import binascii

    items = data.get(field)
    if not isinstance(items, list) or not items:
        raise RequestError(400, f"field '{field}' must be a non-empty list of base64 images (data URLs)")
    if len(items) > limits.max_images:
        raise RequestError(
            422, f"field '{field}': {len(items)} images; at most {limits.max_images} per request"
        )
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise RequestError(400, f"field '{field}': item {i} must be a string (a base64 data URL)")
        text = item.split(",", 1)[1] if item.startswith("data:") and "," in item else item
        try:
            out.append(base64.b64decode(text, validate=True))
        except (binascii.Error, ValueError):
            raise RequestError(
                400, f"field '{field}': item {i} is not base64 (expected a data URL)"
            ) from None
    return out
