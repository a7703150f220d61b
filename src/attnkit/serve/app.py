"""The explorer's ASGI app (Starlette): the JSON API and the pages, over the models it was started with.

Every user error is a 4xx ``{"error": "..."}`` naming the field (``serve.limits``); a request from another
host or page, or with a body that is not JSON, is refused at the door (``serve.guard``). Anything else is a
bug: logged with an id, answered 500 with that id. Requests choose models by name among those loaded; no
request names a file. The pages are the package's own front-end (``visualization/explorer``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import AttnkitError, shorten
from ..names import ALIGNMENT_METHODS
from ..results import explorer_rows, prior_json
from ..visualization.explorer import asset, page
from .batching import MicroBatcher, trim_memory
from .guard import Guard, allowed_hosts
from .limits import (
    Limits,
    RequestError,
    boolean,
    check_translate_cost,
    image_list,
    integer,
    number,
    read_body,
    strings,
    text_item,
    work,
)
from .limits import sentences as sentence_list
from .models import ModelSet, alignment_report, reprior

# Sentences (or documents) per model call. Beam search gets less efficient per sentence in big batches
# (padding, the longest sentence sets the steps): on 2 cores enfr-rnn ran 286 sentences/s in batches of 4,
# 222 in 16 and 200-245 in 64, and at 64 clients batches of 64 halved the served requests/s.
MAX_BATCH = 8
MAX_FLOW_SENTENCES = 4  # attention flow: about a second a sentence of 30 pieces on 2 cores
LIMITS = Limits()
MAX_BODY = LIMITS.max_body_bytes
log = logging.getLogger("attnkit.serve")


async def read_json(
    request: Request, limits: Limits = LIMITS, fields: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """The request's JSON object, within the body limit; ``fields``: the names it may hold (an unknown one
    is a 400 naming the valid ones, so a misspelt option is never silently ignored)."""
    declared = request.headers.get("content-length", "")
    if (
        declared.isascii()
        and declared.isdigit()
        and len(declared) < 20
        and int(declared) > limits.max_body_bytes
    ):
        raise RequestError(413, f"body of {declared} bytes is over the limit of {limits.max_body_bytes}")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limits.max_body_bytes:
            raise RequestError(413, f"body is over the limit of {limits.max_body_bytes} bytes")
    data = read_body(body, limits)
    unknown = sorted(set(data) - set(fields)) if fields is not None else []
    if unknown:
        raise RequestError(400, f"unknown field {shorten(unknown[0], 40)}; valid: {', '.join(fields or ())}")
    return data


Handler = Callable[[Request], Awaitable[dict[str, Any]]]


def json_endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            answer = await handler(request)
        except RequestError as e:
            return JSONResponse({"error": str(e)}, status_code=e.status)
        except AttnkitError as e:  # the user's input, found deeper down (data, model limits, names)
            return JSONResponse({"error": str(e).strip("'\"")}, status_code=422)
        except Exception:  # a bug, not the user's input: logged with an id, answered without a traceback
            error_id = uuid.uuid4().hex[:12]
            log.exception("internal error %s in %s", error_id, request.url.path)
            return JSONResponse(
                {"error": f"internal error {error_id} (see the server log)", "id": error_id}, status_code=500
            )
        # large answers are rendered off the event loop, so other clients' requests keep moving
        return await asyncio.get_running_loop().run_in_executor(None, JSONResponse, answer)

    return endpoint


class Explorer:
    """The app's state: models, their micro-batchers and two model threads (lanes).

    Requests whose work is at least ``limits.heavy_work`` (``heavy_chars`` for documents) run on the
    heavy lane's thread, one sentence or document per model call, round-robin among heavy requests;
    everything else runs on the light lane. A heavy request therefore shares the CPU with light ones
    (each lane's small batches use one graph thread) instead of making them queue behind it, and the
    memory its large beams took is handed back to the system after each call (``trim_memory``).
    """

    def __init__(
        self,
        models: ModelSet,
        batching: bool = True,
        max_wait: float = 0.0,
        max_batch: int = MAX_BATCH,
        limits: Limits = LIMITS,
    ) -> None:
        self.models, self.limits = models, limits
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="attnkit-model")
        self.heavy_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="attnkit-heavy")
        self.translate_batcher = MicroBatcher(self._translate, self.executor, batching, max_batch, max_wait)
        self.classify_batcher = MicroBatcher(self._classify, self.executor, batching, max_batch, max_wait)
        heavy = {"enabled": batching, "max_items": 1, "after": trim_memory}
        self.heavy_translate = MicroBatcher(self._translate, self.heavy_executor, **heavy)  # type: ignore[arg-type]
        self.heavy_classify = MicroBatcher(self._classify, self.heavy_executor, **heavy)  # type: ignore[arg-type]

    def _translate(self, sentences: list[str], key: Any) -> list[dict[str, Any]]:
        name, beam, n_best, layers, alternatives, self_maps, attention_map = key
        translator = self.models.translators[name].model
        results = translator.translate(sentences, beam=beam, n_best=n_best)
        if attention_map != "attention":  # read on the torch twin, from the decoded ids
            from ..explain.translator_maps import with_attention_map

            results = with_attention_map(self.models.torch_twin(name), results, attention_map)
        return explorer_rows(translator, results, layers, alternatives, self_maps)

    def _classify(self, documents: list[str], key: Any) -> list[Any]:
        return list(self.models.classifiers[key].model.classify(documents))

    async def translate(self, request: Request) -> dict[str, Any]:
        data = await read_json(
            request,
            self.limits,
            (
                "sentences",
                "model",
                "beam",
                "n_best",
                "layers",
                "alternative_attention",
                "self_attention",
                "attention_map",
            ),
        )
        sentences = sentence_list(data, "sentences", self.limits)
        beam = integer(data, "beam", 5, 1, self.limits.max_beam)
        n_best = integer(data, "n_best", 1, 1, beam)
        layers = boolean(data, "layers")
        alternatives = boolean(data, "alternative_attention")  # the n-best's own maps: asked for, as layers
        model = ModelSet.pick(self.models.translators, data.get("model"), "translator")
        maps = model.model.attention_layers * model.model.attention_heads if layers else 0
        maps += n_best - 1 if alternatives else 0
        self_maps = boolean(data, "self_attention")  # encoder and decoder self-attention, where returned
        maps += 2 * model.model.attention_layers * model.model.attention_heads if self_maps else 0
        check_translate_cost(sentences, beam, maps, self.limits)
        attention_map = data.get("attention_map", "attention")
        if attention_map not in self.models.attention_maps(model.name):
            valid = ", ".join(self.models.attention_maps(model.name))
            raise RequestError(
                400, f"field 'attention_map': {shorten(attention_map, 40)} for {model.name}; valid: {valid}"
            )
        if attention_map == "flow" and len(sentences) > MAX_FLOW_SENTENCES:
            raise RequestError(422, f"attention_map flow: at most {MAX_FLOW_SENTENCES} sentences a request")
        heavy = work(sentences, beam) >= self.limits.heavy_work or attention_map != "attention"
        lane = self.heavy_translate if heavy else self.translate_batcher
        key = (model.name, beam, n_best, layers, alternatives, self_maps, attention_map)
        results = await lane.submit(sentences, key)
        return {"model": model.name, "results": results}

    async def classify(self, request: Request) -> dict[str, Any]:
        data = await read_json(request, self.limits, ("documents", "model", "prior_correction"))
        documents = strings(data, "documents", self.limits, self.limits.max_document_chars)
        empty = [i for i, d in enumerate(documents) if not d.strip()]
        if empty:
            raise RequestError(400, f"field 'documents': item {empty[0]} is empty")
        tau = number(data, "prior_correction", 0.0, 1.0)
        model = ModelSet.pick(self.models.classifiers, data.get("model"), "classifier")
        heavy = sum(map(len, documents)) >= self.limits.heavy_chars
        found = await (self.heavy_classify if heavy else self.classify_batcher).submit(documents, model.name)
        own = float(model.model.prior_correction)
        used = own if tau is None else tau
        prior = {**prior_json(model.model), "prior_correction": used}
        results = [reprior(r, prior["class_weights"], own, used).to_json() for r in found]
        return {"model": model.name, "results": results, "prior": prior}

    async def caption(self, request: Request) -> dict[str, Any]:
        data = await read_json(request, self.limits, ("images", "model", "beam", "n_best"))
        beam = integer(data, "beam", 1, 1, self.limits.max_beam)
        n_best = integer(data, "n_best", 1, 1, beam)
        model = ModelSet.pick(self.models.captioners, data.get("model"), "captioner")
        images = image_list(data, "images", self.limits)
        captioner = model.model

        def run() -> list[dict[str, Any]]:
            names = [f"field 'images': item {i}" for i in range(len(images))]
            loaded = [captioner.load_bytes(b, name) for b, name in zip(images, names)]
            return [r.to_json() for r in captioner.caption_loaded(loaded, names, beam, n_best)]

        results = await asyncio.get_running_loop().run_in_executor(self.heavy_executor, run)  # decoding
        return {"model": model.name, "results": results}

    async def inspect(self, request: Request) -> dict[str, Any]:
        """A causal LM's attention over one text (``attnkit.inspect``), within the token and cell limits."""
        from ..inspecting import inspect, parse_indices

        data = await read_json(request, self.limits, ("text", "model", "layers", "heads", "rows", "maps"))
        text = text_item(data.get("text"), "text", 0, self.limits.max_body_bytes)
        model = ModelSet.pick(self.models.lms, data.get("model"), "lm")
        specs = {name: data.get(name) for name in ("layers", "heads", "rows")}
        for name, value in specs.items():
            if value is not None and not isinstance(value, str):
                raise RequestError(400, f"field {name!r} must be a string of indices and slices, e.g. '-64:'")
        maps = data.get("maps", [])
        if not isinstance(maps, list) or not all(m in ("rollout", "grad") for m in maps):
            raise RequestError(400, "field 'maps' must be a list of 'rollout' and 'grad'")
        lm = model.model
        tokens = len(lm.tokenizer(text)["input_ids"])
        if tokens > self.limits.max_context_tokens:
            raise RequestError(
                422, f"field 'text' is {tokens} tokens; at most {self.limits.max_context_tokens} per request"
            )

        layers, heads = lm.attention_layers, lm.attention_heads
        kept = (
            len(parse_indices(specs["layers"], layers, "layers", [layers - 1]))
            * len(parse_indices(specs["heads"], heads, "heads", list(range(heads))))
            * len(parse_indices(specs["rows"], tokens, "rows", [tokens - 1]))
        )
        if kept * tokens > self.limits.max_context_cells:  # before any work
            raise RequestError(
                422,
                f"{kept * tokens} captured weights asked for; at most {self.limits.max_context_cells} "
                "per request: fewer rows, heads or layers",
            )
        result = await asyncio.get_running_loop().run_in_executor(
            self.heavy_executor,
            lambda: inspect(
                lm, text, maps=maps, layers=specs["layers"], heads=specs["heads"], rows=specs["rows"]
            ).to_json(digits=5),
        )
        result["model"] = model.name  # the name it is served under, never the server's path
        return {"model": model.name, "result": result}

    async def align(self, request: Request) -> dict[str, Any]:
        fields = (
            "sources",
            "targets",
            "model",
            "method",
            "gold",
            "null_threshold",
            "probabilities",
            "lexical",
        )
        data = await read_json(request, self.limits, fields)
        sources = sentence_list(data, "sources", self.limits)
        targets = sentence_list(data, "targets", self.limits)
        if len(sources) != len(targets):
            raise RequestError(
                400, f"fields 'sources' and 'targets' differ in length: {len(sources)} vs {len(targets)}"
            )
        method = data.get("method")
        if method is not None and method not in ALIGNMENT_METHODS:
            raise RequestError(
                400, f"field 'method': {shorten(method, 40)} is not one of {', '.join(ALIGNMENT_METHODS)}"
            )
        gold = data.get("gold")
        if gold is not None and not isinstance(gold, str):
            raise RequestError(400, "field 'gold' must be a string of NAACL lines 'SENT SRC TGT [S|P]'")
        if gold is not None:
            gold = strings({"gold": [gold]}, "gold", self.limits, self.limits.max_body_bytes)[0]
        # as `attnkit align --null-threshold P --format json [--probabilities]`
        null_threshold = number(data, "null_threshold", 0.0, 1.0) or 0.0
        lexical = number(data, "lexical", 0.0, 1.0)  # as `--lexical W`; absent: the model's default
        given = data if data.get("probabilities") is not None else {}  # null: not asked, as a missing field
        probabilities = boolean(given, "probabilities")
        model = ModelSet.pick(self.models.translators, data.get("model"), "translator")
        lane = self.heavy_executor if work(sources + targets) >= self.limits.heavy_work else self.executor

        def run() -> dict[str, Any]:  # the models `attnkit align --model NAME` reads, loaded on first use
            aligners = self.models.aligners(model.name)
            return alignment_report(
                aligners, sources, targets, method, gold, null_threshold, probabilities, lexical
            )

        report = await asyncio.get_running_loop().run_in_executor(lane, run)
        return {"model": model.name, **report}

    async def models_info(self, request: Request) -> dict[str, Any]:
        return {**self.models.describe(), "limits": self.limits.to_json()}

    async def health(self, request: Request) -> dict[str, Any]:
        stats = {
            "translate": vars(self.translate_batcher.stats),
            "classify": vars(self.classify_batcher.stats),
            "heavy_translate": vars(self.heavy_translate.stats),
            "heavy_classify": vars(self.heavy_classify.stats),
        }
        return {"status": "ok", "batching": self.translate_batcher.enabled, "model_calls": stats}


def create_app(
    models: ModelSet,
    batching: bool = True,
    cors: list[str] | None = None,
    max_wait: float = 0.0,
    max_batch: int = MAX_BATCH,
    hosts: list[str] | None = None,
    limits: Limits = LIMITS,
) -> Starlette:
    """The explorer app over ``models``; ``cors``: origins allowed to call the API (none by default);
    ``hosts``: Host header names served besides 127.0.0.1, localhost and ::1."""
    explorer = Explorer(models, batching, max_wait, max_batch, limits)

    async def index(request: Request) -> Response:
        return Response(page(), media_type="text/html; charset=utf-8")

    def static(name: str, media: str) -> Route:
        async def send(request: Request) -> Response:
            return Response(asset(name), media_type=media)

        return Route(f"/{name}", send)

    routes = [
        Route("/", index),
        static("explorer.js", "text/javascript; charset=utf-8"),
        static("views.js", "text/javascript; charset=utf-8"),
        static("captions.js", "text/javascript; charset=utf-8"),
        static("heads.js", "text/javascript; charset=utf-8"),
        static("context.js", "text/javascript; charset=utf-8"),
        static("explorer.css", "text/css; charset=utf-8"),
        Route("/api/translate", json_endpoint(explorer.translate), methods=["POST"]),
        Route("/api/classify", json_endpoint(explorer.classify), methods=["POST"]),
        Route("/api/align", json_endpoint(explorer.align), methods=["POST"]),
        Route("/api/caption", json_endpoint(explorer.caption), methods=["POST"]),
        Route("/api/inspect", json_endpoint(explorer.inspect), methods=["POST"]),
        Route("/api/models", json_endpoint(explorer.models_info)),
        Route("/api/health", json_endpoint(explorer.health)),
    ]
    middleware = [Middleware(Guard, hosts=allowed_hosts("127.0.0.1", hosts or []), origins=cors or [])]
    if cors:
        middleware.append(Middleware(CORSMiddleware, allow_origins=cors, allow_methods=["GET", "POST"]))

    async def refused(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        detail = getattr(exc, "detail", "not found")
        return JSONResponse(
            {"error": f"{request.method} {shorten(request.url.path, 80)}: {detail}"},
            status,
            headers=getattr(exc, "headers", None),  # a 405 says which methods are allowed (Allow)
        )

    app = Starlette(routes=routes, middleware=middleware, exception_handlers={404: refused, 405: refused})
    app.state.explorer = explorer
    return app
