"""Handlers as gradio event functions. The session's resources and gradio's special arguments are
filled in, a typed view becomes the outputs in order, and the tab's message line is always the last
output: cleared by every action that works, or one readable line for what went wrong. Errors never
raise into gradio, so its red "Error" badges never cover a control."""
from __future__ import annotations

import dataclasses
import inspect
import logging
from typing import Any
from collections.abc import Callable

import gradio as gr

from backends.errors import BackendError
from components.common.errors import UserError
from components.window_search.ui.session import SESSIONS, WindowSearchSession

log = logging.getLogger(__name__)
UNEXPECTED = "Something went wrong while doing that ({}); nothing was changed. Try again, or reload the page."


def outputs(view_value: Any) -> list:
    """A view's fields in order (its `message` goes last, to the message line)."""
    if view_value is None:  # an event with no outputs but the message line
        return [""]
    if not dataclasses.is_dataclass(view_value) or isinstance(view_value, WindowSearchSession):
        return [view_value, ""]
    fields = [f.name for f in dataclasses.fields(view_value) if f.name != "message"]
    return [getattr(view_value, f) for f in fields] + [getattr(view_value, "message", "")]


def _failed(n_out: int, exc: Exception) -> list:
    if isinstance(exc, (UserError, BackendError)):
        text = str(exc)
    else:
        log.exception("window search: unexpected error")
        text = UNEXPECTED.format(type(exc).__name__)
    return [gr.skip()] * n_out + [f"⚠ {text}"]


def event(tab: Any, handler: Callable[..., Any], n_out: int, *, kind: str = "plain") -> Callable[..., Any]:
    """`handler(tab, session resources, *inputs[, extra])` as a gradio event function with `n_out`
    outputs plus the message line. kind: "plain"; "select" (extra: the selected index); "data"
    (extra: the data a gr.HTML trigger sent); "params" (first input: the page's query parameters);
    "progress" (progress=gr.Progress())."""
    def call(request: gr.Request, args: tuple, extra: dict) -> Any:
        return handler(tab, SESSIONS.get(request.session_hash), *args, **extra)

    if inspect.isgeneratorfunction(handler):
        def fn(request: gr.Request, *args):
            try:
                for value in call(request, args, {}):
                    yield outputs(value)
            except Exception as exc:  # noqa: BLE001 - shown on the message line
                yield _failed(n_out, exc)
        return fn

    def guarded(request: gr.Request, args: tuple, extra: dict | None = None) -> list:
        try:
            return outputs(call(request, args, extra or {}))
        except Exception as exc:  # noqa: BLE001 - shown on the message line
            return _failed(n_out, exc)

    if kind == "select":
        def fn(request: gr.Request, evt: gr.SelectData, *args):
            return guarded(request, (*args, evt.index))
    elif kind == "data":
        def fn(request: gr.Request, evt: gr.EventData, *args):
            return guarded(request, (*args, dict(evt._data or {})))
    elif kind == "params":
        def fn(request: gr.Request, *args):
            return guarded(request, (dict(request.query_params or {}), *args))
    elif kind == "progress":
        def fn(request: gr.Request, bar=gr.Progress(), *args):
            return guarded(request, args, {"progress": bar})
    else:
        def fn(request: gr.Request, *args):
            return guarded(request, args)
    return fn


def release_session(request: gr.Request) -> None:
    SESSIONS.release(request.session_hash)
