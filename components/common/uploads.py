"""What a server of this app takes from a visitor's request body (issue 38).

gradio serves `POST <root>/gradio_api/upload` (and `process_recording`, and multipart bodies on
`component_server`) to anyone who can reach the page, whether or not the page has an upload
control, and writes what it receives into its temp folder. A page with no upload control (the
study page) closes these routes (`closed_uploads`: 403 before a byte of the body is read) and
bounds every other request body (413), so a stranger can fill neither the disk nor the memory.
Pages that take uploads bound their size with gradio's `max_file_size` (`max_upload()`).

The bound is applied as an ASGI middleware given to gradio's FastAPI app at launch
(`launch(app_kwargs=closed_uploads(...))`): it sees every request, gradio's routes included."""
from __future__ import annotations

import os
from typing import Any

DEFAULT_MAX_UPLOAD = "2gb"
#: the study page's largest request: a start, an answer with its timing stamp, the researcher
#: token (a few hundred bytes); 64 KiB leaves room and nothing to fill
NO_UPLOAD_MAX_BODY = 64 * 1024
UPLOAD_ROUTES = ("/upload", "/process_recording")
CLOSED = b"This page takes no uploads."
TOO_LARGE = b"Request body too large for this page."


def max_upload() -> str:
    """gradio's `max_file_size` for pages that take uploads: APP_MAX_UPLOAD (default 2gb, a feature
    film), e.g. `500mb`."""
    return os.environ.get("APP_MAX_UPLOAD", "").strip() or DEFAULT_MAX_UPLOAD


def _header(scope: dict, name: bytes) -> bytes:
    return next((v for k, v in scope.get("headers", ()) if k.lower() == name), b"")


async def _refuse(send: Any, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class NoUploads:
    """ASGI middleware: upload routes refused (403) for everyone, multipart bodies refused on every
    route, and any request body over `max_body` bytes refused (413) before it is read, or cut
    off (the app sees the client leave) when it comes without a Content-Length."""

    def __init__(self, app: Any, max_body: int = NO_UPLOAD_MAX_BODY) -> None:
        self.app, self.max_body = app, max_body

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", "")).rstrip("/")
        if path.endswith(UPLOAD_ROUTES) or _header(scope, b"content-type").lower().startswith(b"multipart/"):
            await _refuse(send, 403, CLOSED)
            return
        length = _header(scope, b"content-length")
        if length:
            if not length.isdigit() or int(length) > self.max_body:
                await _refuse(send, 413, TOO_LARGE)
                return
            await self.app(scope, receive, send)
            return
        seen = 0

        async def bounded() -> dict:
            nonlocal seen
            message = await receive()
            if message.get("type") == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    return {"type": "http.disconnect"}
            return message
        await self.app(scope, bounded, send)


def closed_uploads(max_body: int = NO_UPLOAD_MAX_BODY) -> dict:
    """`app_kwargs` for gradio's `launch`: the app built with `NoUploads` in front of its routes."""
    from starlette.middleware import Middleware

    return {"middleware": [Middleware(NoUploads, max_body=max_body)]}
