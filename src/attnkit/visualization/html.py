"""A self-contained HTML page that highlights HAN's word and sentence attention.

Every word is HTML-escaped (a review containing ``<script>`` stays text). Word shading is the
word's weight relative to the sentence's largest; the bar left of each sentence is the sentence weight.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:860px;margin:2em auto;color:#222}
.doc{border:1px solid #ddd;border-radius:8px;padding:1em 1.2em;margin-bottom:1.5em}
.head{font-weight:600;margin-bottom:.6em}.probs{color:#555;font-size:.9em;margin-bottom:.8em}
.sent{display:flex;align-items:flex-start;margin:.25em 0}
.bar{flex:0 0 64px;height:1.1em;margin-right:.7em;background:#eee;border-radius:3px;overflow:hidden}
.bar span{display:block;height:100%;background:#1f77b4}
.sw{flex:0 0 3.2em;color:#666;font-size:.8em}
.w{padding:0 2px;border-radius:3px;line-height:1.6}
"""


def _word(word: str, weight: float, top: float) -> str:
    alpha = 0.0 if top <= 0 else min(1.0, weight / top)
    return (
        f'<span class="w" style="background:rgba(214,39,40,{alpha:.2f})" '
        f'title="{weight:.3f}">{html.escape(word)}</span>'
    )


def document_html(result: Any) -> str:
    probs = " · ".join(f"{html.escape(k)}★ {v:.2f}" for k, v in result.probabilities.items())
    rows = []
    for words, weights, s_weight in zip(result.sentences, result.word_weights, result.sentence_weights):
        top = max(weights) if weights else 0.0
        text = " ".join(_word(w, a, top) for w, a in zip(words, weights))
        rows.append(
            f'<div class="sent"><div class="bar"><span style="width:{100 * s_weight:.0f}%"></span></div>'
            f'<div class="sw">{s_weight:.2f}</div><div>{text}</div></div>'
        )
    unread = getattr(result, "unread_words", 0)
    note = (
        f'<div class="probs">{unread} words past what the model reads (60 words a sentence, 30 sentences) '
        "are shown unshaded: they did not count.</div>"
        if unread
        else ""
    )
    return (
        f'<div class="doc"><div class="head">predicted: {html.escape(str(result.label))}★</div>'
        f'<div class="probs">{probs}</div>{note}{"".join(rows)}</div>'
    )


def attention_page(results: Sequence[Any], title: str = "attnkit: what the classifier attended to") -> str:
    body = "\n".join(document_html(r) for r in results)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        "<p>Bars: sentence attention. Red shading: word attention within its sentence.</p>\n"
        f"{body}\n</body></html>\n"
    )
