"""The explorer's front-end: one HTML page, two scripts, one style sheet, no library, no network.

``page()`` is what ``attnkit serve`` sends; ``static_page(data)`` is the same page with the script and
styles inlined and the results embedded, for ``attnkit translate --html`` / ``classify --html``: it
opens from file:// with the network off. Every piece of user text reaches the DOM as a text node
(never as HTML), and the embedded JSON escapes ``<``, ``>`` and ``&``, so no text can end the script
element or become markup.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

ASSETS = ("explorer.html", "explorer.js", "views.js", "captions.js", "heads.js", "context.js", "explorer.css")


def asset(name: str) -> bytes:
    if name not in ASSETS:
        raise KeyError(name)
    return files(__name__).joinpath(name).read_bytes()


def page() -> bytes:
    return asset("explorer.html")


def embedded_json(data: Any) -> str:
    """JSON safe inside a <script> element: no '<', '>' or '&' characters at all."""
    from ...files import finite

    text = json.dumps(finite(data), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def static_page(data: dict[str, Any]) -> str:
    """A self-contained page showing ``data`` ({"view": "translate" or "classify", ...}: API answers)."""
    html = asset("explorer.html").decode("utf-8")
    css = asset("explorer.css").decode("utf-8")
    script, views, captions, heads, context = (
        asset(n).decode("utf-8").replace("</", "<\\/")
        for n in ("explorer.js", "views.js", "captions.js", "heads.js", "context.js")
    )
    html = html.replace('<link rel="stylesheet" href="explorer.css">', f"<style>\n{css}</style>")
    payload = f'<script id="attnkit-data" type="application/json">{embedded_json(data)}</script>'
    html = html.replace('<script src="views.js"></script>', f"<script>\n{views}</script>")
    html = html.replace('<script src="captions.js"></script>', f"<script>\n{captions}</script>")
    html = html.replace('<script src="heads.js"></script>', f"<script>\n{heads}</script>")
    html = html.replace('<script src="context.js"></script>', f"<script>\n{context}</script>")
    return html.replace('<script src="explorer.js"></script>', f"{payload}\n<script>\n{script}</script>")
