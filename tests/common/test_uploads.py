"""components/common/uploads.py as an ASGI middleware, driven directly: upload routes and multipart
bodies refused before a byte is read, a body over the bound refused by its Content-Length, and one
sent without a length cut off once it passes the bound (the study server's test probes it live:
tests/cloze/test_study_access.py)."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from components.common.uploads import NoUploads, max_upload


def call(method: str, path: str, headers: dict[str, str], chunks: list[bytes], max_body: int = 100) -> dict:
    seen = {"read": 0, "cut": False, "reached": False, "status": None}
    pending = [{"type": "http.request", "body": c, "more_body": i + 1 < len(chunks)} for i, c in enumerate(chunks)]

    async def receive():
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            seen["status"] = message["status"]

    async def app(scope, receive, send):
        seen["reached"] = True
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                seen["cut"] = True
                return
            seen["read"] += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})

    scope = {"type": "http", "method": method, "path": path,
             "headers": [(k.encode(), v.encode()) for k, v in headers.items()]}
    # a thread of its own: a test before it (playwright's sync API) may leave this thread's loop running
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, NoUploads(app, max_body=max_body)(scope, receive, send)).result(30)
    return seen


def test_upload_routes_and_multipart_bodies_are_refused_unread():
    for path in ("/gradio_api/upload", "/gradio_api/upload/", "/x/gradio_api/process_recording"):
        seen = call("POST", path, {"content-length": "6"}, [b"probe!"])
        assert seen["status"] == 403 and not seen["reached"]
    seen = call("POST", "/gradio_api/component_server", {"content-type": "multipart/form-data; boundary=b"}, [b"x"])
    assert seen["status"] == 403 and not seen["reached"]


def test_a_body_over_the_bound_is_refused_or_cut():
    assert call("POST", "/gradio_api/queue/join", {"content-length": "101"}, [b"x" * 101])["status"] == 413
    assert call("POST", "/gradio_api/queue/join", {"content-length": "1e9"}, [b"x"])["status"] == 413
    ok = call("POST", "/gradio_api/queue/join", {"content-length": "100"}, [b"x" * 100])
    assert ok["status"] == 200 and ok["read"] == 100
    chunked = call("POST", "/gradio_api/queue/join", {}, [b"x" * 60, b"x" * 60, b"x" * 60])
    assert chunked["reached"] and chunked["cut"] and chunked["read"] == 60    # never more than the bound
    assert call("GET", "/gradio_api/upload", {}, [b""])["status"] == 200       # reads are not bodies


def test_pages_with_uploads_bound_their_size(monkeypatch):
    monkeypatch.delenv("APP_MAX_UPLOAD", raising=False)
    assert max_upload() == "2gb"
    monkeypatch.setenv("APP_MAX_UPLOAD", "500mb")
    assert max_upload() == "500mb"
