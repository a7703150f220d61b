"""The server's door (a plain ASGI middleware): who may talk to it and in what form.

- **Host allow-list**: a request whose ``Host`` header names another host is refused (400). A page on an
  attacker's name that resolves to 127.0.0.1 (DNS rebinding) then cannot load the explorer or read results.
- **Origin check**: a request that carries an ``Origin`` header must come from an allowed host or from an
  origin given with ``--cors`` (403): other web pages cannot drive the API from a visitor's browser.
- **JSON bodies only**: a POST must say ``Content-Type: application/json`` (415). Browsers send
  ``text/plain`` and form bodies cross-site without a preflight; JSON always needs one.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from ..errors import shorten

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def host_name(value: str) -> str:
    """The host of a ``Host`` header or URL netloc, without port or IPv6 brackets, lower-cased."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> set[str]:
    """127.0.0.1, localhost and ::1, the bound address unless it is a wildcard, and ``extra``."""
    hosts = set(LOCAL_HOSTS) | {host_name(h) for h in extra}
    if bind not in ("0.0.0.0", "::", ""):
        hosts.add(host_name(bind))
    return hosts


class Guard:
    """Wraps an ASGI app; answers refused requests itself with a JSON ``{"error": ...}``."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str], origins: Iterable[str] = ()) -> None:
        self.app, self.hosts = app, {host_name(h) for h in hosts}
        self.origins = {o.rstrip("/").lower() for o in origins}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message = refusal
        body = json.dumps({"error": message}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = host_name(headers.get("host", ""))
        if host not in self.hosts:
            return 400, (
                f"Host {shorten(headers.get('host', ''))} is not served here "
                f"(allowed: {', '.join(sorted(self.hosts))}; add one with attnkit serve --allow-host NAME)"
            )
        origin = headers.get("origin")
        if origin is not None and not self._origin_ok(origin, headers.get("host", "")):
            return (
                403,
                f"requests from the page at {shorten(origin)} are refused (allow it with --cors ORIGIN)",
            )
        if scope.get("method") == "POST":
            media, *params = [p.strip().lower() for p in headers.get("content-type", "").split(";")]
            if media != "application/json":
                return 415, f"POST bodies must be JSON (Content-Type: application/json), got {shorten(media)}"
            charset = next(
                (p.split("=", 1)[1].strip('"') for p in params if p.startswith("charset=")), "utf-8"
            )
            if charset.replace("-", "").replace("_", "") != "utf8":
                return 415, f"POST bodies must be UTF-8 JSON, got charset={shorten(charset)}"
        return None

    def _origin_ok(self, origin: str, host: str) -> bool:
        """An origin given with --cors, or the explorer's own page: an allowed host on the port the
        request was sent to (another local port is another web site)."""
        if origin.rstrip("/").lower() in self.origins:
            return True
        try:
            parts = urlsplit(origin)
            port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
            served = urlsplit(f"//{host}").port or {"http": 80, "https": 443}.get(parts.scheme)
        except ValueError:  # a port that does not parse
            return False
        return parts.scheme in ("http", "https") and host_name(parts.netloc) in self.hosts and port == served
