"""attnkit in notebooks: every result renders itself with the explorer's own view code.

``show(x, view=None, model=None)`` -> a ``View``, which Jupyter (Lab, classic Notebook, VS Code, Colab)
displays through ``_repr_html_``: the explorer's static page (the same scripts and styles as ``attnkit
serve`` and ``--html``, inlined) inside an ``<iframe srcdoc>`` sandboxed to scripts. The iframe is what
isolates outputs from each other and from the notebook (ids, styles, scripts), needs no Jupyter JavaScript
API and no network (the page's content security policy allows none), and survives saving: the HTML is in
the notebook file. ``save_html(x, path)`` writes the same page as a file. The results' own ``_repr_html_``
(``Translation``, ``Classification``, ``Caption``, ``AlignmentReport``) call ``html`` here.

Each output repeats the view code (~55 KB): isolation needs it, as each iframe is its own document. Large
inputs degrade: past ``MAX_PAYLOAD`` bytes of data the layer maps are left out, then results are cut to
what fits, with a note in the view.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import AttnkitError, UsageError

MAX_PAYLOAD = 1_500_000  # bytes of JSON data in one view (a 30-token sentence with layers: ~60 KB)
VIEWS = ("matrix", "head", "model")  # translation views (head and model need a Transformer's layers)
ACCEPTS = (
    "a Translation, Classification, Caption, AlignmentReport or Inspection, a list of one kind, or a heads "
    "report "
    "(attnkit heads --out, evaluation.heads.head_report)"
)


class View:
    """A displayable view: ``data`` is the explorer's payload ({"view": ..., ...}); ``picture``: a function
    giving a static PNG of it, shown where a notebook strips the frame (JupyterLab and classic Notebook
    sanitize the HTML of an untrusted, e.g. reopened, notebook: an ``<img>`` survives, an iframe does not)."""

    def __init__(self, data: dict[str, Any], height: int, picture: Any = None) -> None:
        self.data, self.height, self.picture = data, height, picture

    def page(self) -> str:
        from .visualization.explorer import static_page

        return static_page({**self.data, "notebook": True})

    def _repr_html_(self) -> str:
        # inside a double-quoted attribute only & and " must be escaped (html.escape's < and > would add
        # a third to the size of the view code)
        source = self.page().replace("&", "&amp;").replace('"', "&quot;")
        name = f"attnkit-{self.data['view']}-{uuid.uuid4().hex[:8]}"
        frame = (
            f'<iframe id="{name}" class="attnkit-view" title="attnkit {self.data["view"]} view" '
            f'sandbox="allow-scripts allow-downloads" srcdoc="{source}" '
            f'style="width: 100%; height: {self.height}px; border: 1px solid #ddd"></iframe>'
        )
        # where the frame is stripped (an untrusted notebook), a static picture and a line say what to do;
        # where scripts run (the frame does too), this one hides them
        png = self.picture() if self.picture is not None else None
        image = (
            f'<img alt="attnkit {self.data["view"]} view" src="data:image/png;base64,{png}">' if png else ""
        )
        fallback = (
            f'<div id="{name}-static">{image}<p>attnkit {self.data["view"]} view: run the cell or trust the '
            "notebook to see it interactive.</p></div>"
        )
        hide = f'<script>document.getElementById("{name}-static").style.display = "none";</script>'
        return f'<div class="attnkit-output">{frame}{fallback}{hide}</div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self._repr_html_(), "text/plain": repr(self)}

    def __repr__(self) -> str:
        count = len(self.data.get("results", self.data.get("items", [])) or [1])
        return (
            f"<attnkit {self.data['view']} view of {count} item(s): display it in a notebook, or .save(path)>"
        )

    def save(self, path: str | Path) -> Path:
        """The same view as one offline HTML file."""
        from .files import atomic_write_text, refuse_same_outputs

        refuse_same_outputs({"path": path})
        atomic_write_text(path, self.page())
        return Path(path)


def show(x: Any, view: str | None = None, model: Any = None) -> View:
    """A notebook view of ``x`` (see ``ACCEPTS``). ``view``: for translations, the view each card opens
    with (matrix, head, model; head and model need layer attention: pass ``model``, the translator, to add
    every layer's and head's); ``model``: a classifier adds its prior-correction slider."""
    from .alignment.aligner import AlignmentReport
    from .caption_base import Caption
    from .results import Classification, Inspection, Translation

    items = list(x) if isinstance(x, (list, tuple)) else [x]
    kinds = {type(i) for i in items}
    if view is not None and view not in VIEWS:
        raise UsageError(f"view {view!r}: valid views are {', '.join(VIEWS)}")
    if isinstance(x, dict) and "heads" in x and "pruning" in x:
        return View({"view": "heads", "report": x}, 700, _picture("heads:heads_figure", x))
    if not items or len(kinds) != 1:
        raise UsageError(f"show takes {ACCEPTS}; got {_describe(x)}")
    first = items[0]
    if isinstance(first, Translation):
        return _translations(items, view, model)
    if view is not None:
        raise UsageError(f"view applies to translations; {type(first).__name__} has one view")
    if isinstance(first, Classification):
        return _classifications(items, model)
    if isinstance(first, Caption):
        return _captions(items)
    if isinstance(first, AlignmentReport) and len(items) == 1:
        return _alignment(first)
    if isinstance(first, Inspection) and len(items) == 1:
        return _context(first)
    raise UsageError(f"show takes {ACCEPTS}; got {_describe(x)}")


def html(x: Any) -> str:
    """``_repr_html_`` of a result: its default view."""
    return show(x)._repr_html_()


def save_html(x: Any, path: str | Path, view: str | None = None, model: Any = None) -> Path:
    """``show(x, view, model)`` written to ``path`` as one offline page."""
    return show(x, view, model).save(path)


def _describe(x: Any) -> str:
    if isinstance(x, (list, tuple)):
        kinds = sorted({type(i).__name__ for i in x})
        return f"a list of {', '.join(kinds) or 'nothing'}"
    return f"a {type(x).__name__}"


def _translations(items: Sequence[Any], view: str | None, model: Any) -> View:
    rows, note = [], ""
    for r in items:
        row = r.to_json()
        layers = getattr(model, "layer_attention", None)
        maps = layers(r) if layers is not None and r.translation else None
        if maps is not None:
            # per-mille integers (the page divides them back): a third of the size of 4-decimal floats
            row["layer_attention_milli"] = (maps * 1000).round().astype(int).tolist()
        rows.append(row)
    if view in ("head", "model") and not any("layer_attention_milli" in row for row in rows):
        raise UsageError(
            f"the {view} view needs every layer's attention: show(result, view, model=translator)"
        )
    rows, note = _fit(rows)
    tokens = max((len(r["target_tokens"]) for r in rows), default=1)
    # the matrix (24 px a target token) above the links (~180 px), per card; the frame scrolls past its height
    height = min(470 + 24 * tokens + (160 if view in ("head", "model") else 0), 1000)  # one card at a time
    data: dict[str, Any] = {"view": "translate", "results": rows, "picker": len(rows) > 1}
    data.update({"initial": view} if view else {})
    return View({**data, **({"note": note} if note else {})}, min(height, 1400), lambda: _heatmap(items[0]))


def _heatmap(result: Any) -> str | None:
    """The first translation's attention as a small PNG (base64), or None without matplotlib."""
    try:
        from .visualization.heatmap import attention_figure
    except ImportError:
        return None
    if not result.translation:
        return None
    return _png(attention_figure(result.attention, result.source_tokens, result.target_tokens))


def _picture(figure: str, x: Any) -> Any:
    """A ``View.picture``: ``attnkit.visualization.<figure>`` of ``x`` as a PNG, None without matplotlib."""

    def picture() -> str | None:
        from .names import resolve

        try:
            return _png(resolve(f"attnkit.visualization.{figure}")(x))
        except (
            ImportError,
            AttnkitError,
            ValueError,
            KeyError,
        ):  # no matplotlib, or a report too thin to draw
            return None

    return picture


def _png(figure: Any) -> str:
    import base64
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=60, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _fit(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Rows within ``MAX_PAYLOAD``: without layer maps first, then the first ones that fit (a note says)."""
    size = len(json.dumps(rows))
    if size <= MAX_PAYLOAD:
        return rows, ""
    rows = [{k: v for k, v in r.items() if k != "layer_attention_milli"} for r in rows]
    kept, total = [], 0
    for row in rows:
        total += len(json.dumps(row))
        if total > MAX_PAYLOAD:
            break
        kept.append(row)
    dropped = len(rows) - len(kept)
    note = f"too large for one view ({size // 1000} KB): layer maps left out"
    return kept, note + (f", {dropped} of {len(rows)} results not shown" if dropped else "")


def _classifications(items: Sequence[Any], model: Any) -> View:
    if model is not None:
        from .results import prior_json

        prior = prior_json(model)
    else:  # without the classifier its training class weights are unknown: the slider has nothing to do
        labels = list(items[0].probabilities)
        prior = {"labels": labels, "class_weights": [1.0] * len(labels), "prior_correction": 0.0}
    rows = [r.to_json() for r in items]
    limits = {"max_sentences": 10**6, "max_words": 10**6}
    height = min(240 + 90 * max(len(r["sentences"]) for r in rows), 1200)  # one card at a time
    data = {"view": "classify", "results": rows, "prior": prior, "limits": limits, "picker": len(rows) > 1}
    return View(data, height, _picture("pictures:classification_figure", items[0]))


def _captions(items: Sequence[Any]) -> View:
    from .data.images import read_image
    from .visualization.captions import caption_data

    rows = []
    for r in items:
        if not r.source or not Path(r.source).is_file():
            raise UsageError(f"caption of {r.source or 'an image array'}: show needs the image file it read")
        image, _ = read_image(r.source, 1, None, None)
        rows.append(caption_data(r, (image[0] * 255).round().astype("uint8")))

    def picture() -> str | None:
        try:
            from .visualization.captions import caption_figure
        except ImportError:
            return None
        image, _ = read_image(items[0].source, 1, None, None)
        return _png(caption_figure(items[0], (image[0] * 255).round().astype("uint8")))

    return View({"view": "caption", "results": rows}, min(420 * len(rows), 1200), picture)


def _alignment(report: Any) -> View:
    summary = report.summary()
    score = {k: summary[k] for k in ("aer", "precision", "recall")} if summary else None
    rows = report.rows()
    picture = _picture("pictures:links_figure", rows[0]) if rows else None
    return View({"view": "align", "results": rows, "score": score}, min(80 + 170 * len(rows), 1200), picture)


def _context(result: Any) -> View:
    """A causal LM's long-context view (``attnkit.inspect``): 4 decimals keep 8k tokens under the cap."""
    data = result.to_json(digits=4)
    size = len(json.dumps(data))
    note = ""
    if size > MAX_PAYLOAD:  # the captured rows go first; the overview and roles stay
        data["captured"] = []
        note = f"too large for one view ({size // 1000} KB): captured rows left out (--html keeps them)"

    def picture() -> str | None:
        try:
            from .visualization.context import context_figure
        except ImportError:
            return None
        return _png(context_figure(result))

    return View({"view": "context", "result": data, **({"note": note} if note else {})}, 760, picture)


def compare(
    a: Any,
    b: Any,
    sentences: Sequence[str],
    references: Sequence[str] | None = None,
    beam: int = 5,
    names: tuple[str, str] | None = None,
) -> View:
    """Two translators of one direction side by side: per sentence both outputs and attentions, each one's
    BLEU (with ``references``) and attention entropy, and their agreement: the AER of B's word links
    against A's on A's translation (both forced on it; 0 = the same links). Most disagreeing first. ``a``
    and ``b``: translators, or names/paths to load (shipped, checkpoints, exports, Hugging Face folders)."""
    from .api import load_translator

    names = names or (_name(a), _name(b))
    models = [load_translator(m) if isinstance(m, (str, Path)) else m for m in (a, b)]
    _check_pair(models, names)
    if references is not None and len(references) != len(sentences):
        raise UsageError(f"{len(sentences)} sentences but {len(references)} references")
    results = [m.translate(list(sentences), beam=beam) for m in models]
    agreement = _agreement(models, list(sentences), [r.translation for r in results[0]])
    items = [_item(i, results, agreement, references) for i in range(len(sentences))]
    items.sort(
        key=lambda item: (-(item["agreement"] if item["agreement"] is not None else -1), item["index"])
    )
    summary = _summary(names, results, agreement, references)
    data = {"view": "compare", "models": list(names), "items": items, "summary": summary}
    return View(data, min(180 + 330 * min(len(items), 3), 1200), _picture("pictures:compare_figure", data))


def _name(model: Any) -> str:
    return (
        str(model)
        if isinstance(model, (str, Path))
        else str(getattr(model, "path", "") or type(model).__name__)
    )


def _check_pair(models: list[Any], names: tuple[str, str]) -> None:
    """Both translators (encoder-decoders), of one direction where both are known: one line otherwise."""
    from .api import describe, language_pair

    for model, name in zip(models, names):
        if not hasattr(model, "forced_attention"):
            raise UsageError(f"compare takes two translators; {name} is {describe(model)}")
    first, second = (language_pair(m) for m in models)
    if first and second and first != second:
        raise UsageError(
            f"compare takes two translators of one direction: {names[0]} translates {first[0]}->{first[1]}, "
            f"{names[1]} {second[0]}->{second[1]}"
        )


def _agreement(models: list[Any], sources: list[str], targets: list[str]) -> list[float | None]:
    """Per pair, the AER of model B's argmax word links against model A's on A's translation."""
    from .alignment.links import aer, align, word_matrices

    keep = [i for i, t in enumerate(targets) if t.strip()]
    if not keep:
        return [None] * len(sources)
    pair = [sources[i] for i in keep], [targets[i] for i in keep]
    links = [[align(m, "argmax") for m in word_matrices(model, *pair)] for model in models]
    out: list[float | None] = [None] * len(sources)
    for k, i in enumerate(keep):
        out[i] = round(aer([links[1][k]], [links[0][k]], [links[0][k]]).aer, 4)
    return out


def _entropy(attention: Any) -> float:
    import numpy as np

    rows = np.clip(np.asarray(attention, dtype=np.float64), 1e-12, 1.0)
    return float(-(rows * np.log(rows)).sum(-1).mean()) if rows.size else 0.0


def _item(i: int, results: list[list[Any]], agreement: list[float | None], references: Any) -> dict[str, Any]:
    a, b = results[0][i], results[1][i]
    parts = [f"agreement AER {agreement[i]}" if agreement[i] is not None else "no translation"]
    parts.append(f"entropy {_entropy(a.attention):.2f} vs {_entropy(b.attention):.2f} nats")
    if references is not None:
        from sacrebleu import sentence_bleu

        bleu = [sentence_bleu(r.translation, [references[i]]).score for r in (a, b)]
        parts.append(f"sentence BLEU {bleu[0]:.1f} vs {bleu[1]:.1f}")
    return {
        "index": i,
        "source": a.source,
        "a": a.to_json(alternatives=False),
        "b": b.to_json(alternatives=False),
        "agreement": agreement[i],
        "metrics": "; ".join(parts),
    }


def _summary(
    names: tuple[str, str], results: list[list[Any]], agreement: list[float | None], references: Any
) -> str:
    known = [x for x in agreement if x is not None]
    parts = [f"{len(agreement)} sentences", f"mean agreement AER {sum(known) / max(len(known), 1):.3f}"]
    for name, found in zip(names, results):
        entropy = sum(_entropy(r.attention) for r in found) / max(len(found), 1)
        text = f"{name}: entropy {entropy:.2f} nats"
        if references is not None:
            from .evaluation.metrics import corpus_scores

            text += f", BLEU {corpus_scores([r.translation for r in found], list(references)).bleu:.2f}"
        parts.append(text)
    return "; ".join(parts) + " (most disagreeing first)"
