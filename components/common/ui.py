"""Small helpers shared by the tab UIs (the only shared module that imports gradio)."""
from __future__ import annotations

import functools
import html
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

import gradio as gr

from backends.errors import BackendError
from components.common.errors import UserError


@dataclass
class TabContext:
    """What app.py hands each tab's `build_tab`."""

    data_dir: Path
    settings: gr.State  # value: SessionSettings.to_state() dict; read it with settings.session.backend_for
    demo: gr.Blocks | None = None  # the whole app, for load/unload events


def shown_error(exc: BaseException) -> gr.Error:
    """The message as the page's error toast shows it. The toast renders HTML, so a message naming
    `choices/<stem>/` lost its `<stem>` and was cut; it is escaped here."""
    return gr.Error(html.escape(str(exc), quote=False), print_exception=False)


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn UserError / BackendError raised in a handler into one readable gr.Error."""

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except (UserError, BackendError) as exc:
                raise shown_error(exc) from None
        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (UserError, BackendError) as exc:
            raise shown_error(exc) from None

    return wrapper
