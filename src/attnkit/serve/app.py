"""The explorer's ASGI app (Starlette): the JSON API and the pages, over the models it was started with.

Every user error is a 4xx ``{"error": "..."}`` naming the field; a body over ``MAX_BODY`` bytes is a 413.
Requests choose models by name among those loaded; no request names a file. The pages are the
package's own front-end (``visualization/explorer``), served from fixed routes.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..names import ALIGNMENT_METHODS
from ..results import explorer_rows, prior_json
from ..visualization.explorer import asset, page
from .batching import MicroBatcher
from .models import ModelSet, alignment_report, reprior

MAX_BODY = 256 * 1024
MAX_ITEMS = 64
MAX_BEAM = 10
# Sentences (or documents) per model call. Beam search gets less efficient per sentence in big batches
# (padding, the longest sentence sets the steps): on 2 cores enfr-rnn ran 286 sentences/s in batches of 4,
# 222 in 16 and 200-245 in 64, and at 64 clients batches of 64 halved the served requests/s.
MAX_BATCH = 8
log = logging.getLogger("attnkit.serve")


class RequestError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def read_json(request: Request) -> dict[str, Any]:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise RequestError(413, f"body of {declared} bytes is over the limit of {MAX_BODY}")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise RequestError(413, f"body is over the limit of {MAX_BODY} bytes")
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RequestError(400, f"body is not valid JSON ({e.__class__.__name__}: {e})") from None
    if not isinstance(data, dict):
        raise RequestError(400, "body must be a JSON object")
    return data


def strings(data: dict[str, Any], name: str) -> list[str]:
    value = data.get(name)
    if value is None:
        raise RequestError(400, f"field {name!r} is missing: give a list of strings")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RequestError(400, f"field {name!r} must be a list of strings")
    if not value:
        raise RequestError(400, f"field {name!r} is empty")
    if len(value) > MAX_ITEMS:
        raise RequestError(400, f"field {name!r} has {len(value)} items; at most {MAX_ITEMS} per request")
    return value


def integer(data: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = data.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise RequestError(400, f"field {name!r} must be an integer in {low}..{high}, got {value!r}")
    return value


def number(data: dict[str, Any], name: str, low: float, high: float) -> float | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high:
        raise RequestError(400, f"field {name!r} must be a number in {low}..{high}, got {value!r}")
    return float(value)


Handler = Callable[[Request], Awaitable[dict[str, Any]]]


def json_endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(await handler(request))
        except RequestError as e:
            return JSONResponse({"error": str(e)}, status_code=e.status)
        except LookupError as e:
            return JSONResponse({"error": str(e).strip("'\"")}, status_code=400)
        except ValueError as e:  # bad input found deeper down (data parsing, model limits)
            return JSONResponse({"error": str(e)}, status_code=400)
        except Exception:  # a bug, not the user's input: logged, answered without a traceback
            log.exception("internal error in %s", request.url.path)
            return JSONResponse({"error": "internal error (see the server log)"}, status_code=500)

    return endpoint


class Explorer:
    """The app's state: models, their micro-batchers and the one model thread."""

    def __init__(
        self, models: ModelSet, batching: bool = True, max_wait: float = 0.0, max_batch: int = MAX_BATCH
    ) -> None:
        self.models = models
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="attnkit-model")
        self.translate_batcher = MicroBatcher(self._translate, self.executor, batching, max_batch, max_wait)
        self.classify_batcher = MicroBatcher(self._classify, self.executor, batching, max_batch, max_wait)

    def _translate(self, sentences: list[str], key: Any) -> list[dict[str, Any]]:
        name, beam, n_best, layers = key
        translator = self.models.translators[name].model
        return explorer_rows(translator, translator.translate(sentences, beam=beam, n_best=n_best), layers)

    def _classify(self, documents: list[str], key: Any) -> list[Any]:
        return list(self.models.classifiers[key].model.classify(documents))

    async def translate(self, request: Request) -> dict[str, Any]:
        data = await read_json(request)
        sentences = strings(data, "sentences")
        beam = integer(data, "beam", 5, 1, MAX_BEAM)
        n_best = integer(data, "n_best", 1, 1, beam)
        layers = data.get("layers", False)
        if not isinstance(layers, bool):
            raise RequestError(400, "field 'layers' must be true or false")
        model = ModelSet.pick(self.models.translators, data.get("model"), "translator")
        results = await self.translate_batcher.submit(sentences, (model.name, beam, n_best, layers))
        return {"model": model.name, "results": results}

    async def classify(self, request: Request) -> dict[str, Any]:
        data = await read_json(request)
        documents = strings(data, "documents")
        empty = [i for i, d in enumerate(documents) if not d.strip()]
        if empty:
            raise RequestError(400, f"field 'documents': item {empty[0]} is empty")
        tau = number(data, "prior_correction", 0.0, 1.0)
        model = ModelSet.pick(self.models.classifiers, data.get("model"), "classifier")
        found = await self.classify_batcher.submit(documents, model.name)
        own = float(model.model.prior_correction)
        used = own if tau is None else tau
        prior = {**prior_json(model.model), "prior_correction": used}
        results = [reprior(r, prior["class_weights"], own, used).to_json() for r in found]
        return {"model": model.name, "results": results, "prior": prior}

    async def align(self, request: Request) -> dict[str, Any]:
        data = await read_json(request)
        sources, targets = strings(data, "sources"), strings(data, "targets")
        if len(sources) != len(targets):
            raise RequestError(
                400, f"fields 'sources' and 'targets' differ in length: {len(sources)} vs {len(targets)}"
            )
        method = data.get("method", "intersect")
        if method not in ALIGNMENT_METHODS:
            raise RequestError(
                400, f"field 'method': {method!r} is not one of {', '.join(ALIGNMENT_METHODS)}"
            )
        gold = data.get("gold")
        if gold is not None and not isinstance(gold, str):
            raise RequestError(400, "field 'gold' must be a string of NAACL lines 'SENT SRC TGT [S|P]'")
        model = ModelSet.pick(self.models.translators, data.get("model"), "translator")
        loop = asyncio.get_running_loop()
        report = await loop.run_in_executor(
            self.executor, alignment_report, model.model, sources, targets, method, gold
        )
        return {"model": model.name, **report}

    async def models_info(self, request: Request) -> dict[str, Any]:
        return self.models.describe()

    async def health(self, request: Request) -> dict[str, Any]:
        stats = {
            "translate": vars(self.translate_batcher.stats),
            "classify": vars(self.classify_batcher.stats),
        }
        return {"status": "ok", "batching": self.translate_batcher.enabled, "model_calls": stats}


def create_app(
    models: ModelSet,
    batching: bool = True,
    cors: list[str] | None = None,
    max_wait: float = 0.0,
    max_batch: int = MAX_BATCH,
) -> Starlette:
    """The explorer app over ``models``; ``cors``: origins allowed to call the API (none by default)."""
    explorer = Explorer(models, batching, max_wait, max_batch)

    async def index(request: Request) -> Response:
        return Response(page(), media_type="text/html; charset=utf-8")

    def static(name: str, media: str) -> Route:
        async def send(request: Request) -> Response:
            return Response(asset(name), media_type=media)

        return Route(f"/{name}", send)

    routes = [
        Route("/", index),
        static("explorer.js", "text/javascript; charset=utf-8"),
        static("explorer.css", "text/css; charset=utf-8"),
        Route("/api/translate", json_endpoint(explorer.translate), methods=["POST"]),
        Route("/api/classify", json_endpoint(explorer.classify), methods=["POST"]),
        Route("/api/align", json_endpoint(explorer.align), methods=["POST"]),
        Route("/api/models", json_endpoint(explorer.models_info)),
        Route("/api/health", json_endpoint(explorer.health)),
    ]
    middleware = (
        [Middleware(CORSMiddleware, allow_origins=cors, allow_methods=["GET", "POST"])] if cors else []
    )

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        return JSONResponse(
            {"error": f"{request.method} {request.url.path}: {getattr(exc, 'detail', 'not found')}"}, status
        )

    app = Starlette(routes=routes, middleware=middleware, exception_handlers={404: not_found, 405: not_found})
    app.state.explorer = explorer
    return app
