"""The one UI layer every tab stands on (with page.py and theme.py, the shared modules that import
gradio).

A tab's handlers are module-level functions `handler(tab, res, session, *inputs) -> View`: the
tab's shared data, this visitor's heavy objects (components/common/sessions.py), the typed session
state (a gr.State value) and the event's inputs. `TabEvents.on` wires one to a gradio listener:
it fills in the first two, turns the returned view into the outputs in order and puts the view's
`message` on the tab's one message line, the last output of every event. One error policy: a
UserError / BackendError is one readable line there (the outputs are left as they were); anything
else is logged with a short id and the line says "something went wrong (id)". A success worth
saying ("3 new names found") is a `note` on the same line. Nothing raises into gradio and no
handler calls gr.Error / gr.Warning / gr.Info, so no badge or toast ever covers a control. TabEvents
is the one event adapter: the runs panels, the Model panel (components/common/model_panel.py) and
the study page (components/cloze/study/app.py, its message line of its own) are wired through it
too, with their context object first where they have no per-visitor resources.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import html
import inspect
import logging
import os
import sys
import typing
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr

from backends.errors import BackendError
from components.common import preparing
from components.base.errors import UserError
from components.common.page import view_drawn_js
from components.common.progress import BUSY_CLASS
from components.common.sessions import SessionRegistry, held_anywhere
from components.settings.session import release_backends

log = logging.getLogger(__name__)

SKIP = gr.skip()  # an output left as it is
UNEXPECTED = "Something went wrong while doing that (error {}); nothing was changed. Try again, or reload the page."


@dataclass
class TabContext:
    """What app.py hands each tab's `build_tab`."""

    data_dir: Path
    settings: gr.State  # value: SessionSettings.to_state() dict; read it with settings.session.backend_for
    demo: gr.Blocks | None = None  # the whole app, for load/unload events
    tab: gr.Tab | None = None  # the tab itself, when the app has several
    #: a hidden box the tab writes the query string of its view into; the page puts it in the
    #: address bar while the tab is shown (components/common/page.py, `view_address`)
    address: gr.Textbox | None = None
    #: more runs folders or hf://datasets/... specs (`--runs`), read by every tab's run panels
    runs: tuple[str, ...] = ()


class _Unchanged:
    """A view field's default: the component is left as it is (gr.skip() on the wire)."""

    _one: _Unchanged | None = None

    def __new__(cls) -> _Unchanged:
        if cls._one is None:
            cls._one = super().__new__(cls)
        return cls._one

    def __repr__(self) -> str:
        return "UNCHANGED"

    def __bool__(self) -> bool:
        return False


UNCHANGED: Any = _Unchanged()

#: a view field's type for a gradio update of a component's properties (`gr.update(open=True)`,
#: `gr.update(choices=[...], value=...)`): a dict gradio reads by its keys
Update = dict[str, Any]


def several(n: int) -> Any:
    """A view field that fills `n` components (a tuple of `n` values when set, any of them
    UNCHANGED; UNCHANGED: all `n` left as they are): `clips: tuple = several(12)`."""
    return field(default=UNCHANGED, kw_only=True, metadata={"outputs": n})


@dataclass
class View:
    """What a handler returns: a dataclass whose fields are named after the components the event
    changes. Every field defaults to UNCHANGED and is keyword-only, so a handler names only what
    it changes (`FrameView(frame=46, message="Frame 46")`); a field typed as another view fills
    that view's components (UNCHANGED: all of them left alone); a tuple field fills several.
    `message` goes to the tab's message line: "" clears it (the default: an action that works
    clears an old error), None leaves it as it is. The event's outputs come from the field names
    once (`components(namespace)`), so their order lives in the dataclass alone."""

    message: str | None = field(default="", kw_only=True)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # before @dataclass reads the class: every field without a default gets UNCHANGED, and
        # every field is keyword-only (no view is built from a list of positions)
        for name in cls.__dict__.get("__annotations__", {}):
            if name.startswith("_"):
                continue
            default = cls.__dict__.get(name, dataclasses.MISSING)
            if isinstance(default, dataclasses.Field):
                default.kw_only = True
                continue
            if default is dataclasses.MISSING:
                setattr(cls, name, field(default=UNCHANGED, kw_only=True))
            else:
                setattr(cls, name, field(default=default, kw_only=True))

    @classmethod
    def components(cls, namespace: Any) -> list:
        """The event's outputs: for each field in order, the component named like it in
        `namespace` (an object or a mapping); a view-typed field gives its own fields' components
        (from `namespace.<field>` when that is a namespace of its own, else from `namespace`); a
        tuple field's name gives a sequence of components. `message` is not an output here (the
        tab's TabEvents adds its message line)."""
        found: list = []
        for f, nested in _view_fields(cls):
            value = _lookup(namespace, f.name, cls)
            if nested is not None:
                inner = value if value is not None and not _is_component(value) else namespace
                found.extend(nested.components(inner))
            elif isinstance(value, (list, tuple)):
                found.extend(value)
            else:
                found.append(value)
        return found

    @classmethod
    def size(cls) -> int:
        """How many outputs the view fills."""
        return sum(nested.size() if nested is not None else _tuple_size(cls, f) for f, nested in _view_fields(cls))


def _view_fields(cls: type) -> list[tuple[dataclasses.Field, type | None]]:
    """(field, the view type it holds or None) for each output field of the view class, in order."""
    cached = cls.__dict__.get("_fields_cache")
    if cached is not None:
        return cached
    hints = typing.get_type_hints(cls, globalns=vars(sys.modules[cls.__module__]), localns={"Any": Any})
    result = []
    for f in dataclasses.fields(cls):
        if f.name == "message":
            continue
        kind = hints.get(f.name)
        result.append((f, kind if isinstance(kind, type) and issubclass(kind, View) else None))
    cls._fields_cache = result
    return result


def _tuple_size(cls: type, f: dataclasses.Field) -> int:
    return int(f.metadata.get("outputs", 1))   # a tuple field declares its size (`several(n)`)


def _is_component(value: Any) -> bool:
    return isinstance(value, gr.blocks.Block)


def _lookup(namespace: Any, name: str, cls: type) -> Any:
    if isinstance(namespace, Mapping):
        value = namespace.get(name)
    else:
        value = getattr(namespace, name, None)
    if value is None and _view_fields_nested(cls, name) is None:
        raise KeyError(f"{cls.__name__}.{name}: no component named {name!r} in the layout")
    return value


def _view_fields_nested(cls: type, name: str) -> type | None:
    for f, nested in _view_fields(cls):
        if f.name == name:
            return nested
    return None


def outputs(view: Any) -> list:
    """The outputs of `view` in order, without its message (UNCHANGED: gr.skip())."""
    values: list = []
    for f, nested in _view_fields(type(view)):
        value = getattr(view, f.name)
        if isinstance(value, View):
            values.extend(outputs(value))
        elif value is UNCHANGED:
            values.extend([SKIP] * (nested.size() if nested is not None else _tuple_size(type(view), f)))
        elif isinstance(value, tuple):
            values.extend(SKIP if v is UNCHANGED else v for v in value)   # one of several left alone
        else:
            values.append(value)
    return values


def message_value(view: View) -> Any:
    return SKIP if view.message is None else view.message


def error_line(exc: BaseException, data_dir: str | Path | None = None) -> str:
    """The message line for an exception a handler raised: never a stack trace, HTML escaped
    (the line is Markdown), and the app's data folder never shown as a server path."""
    if isinstance(exc, (UserError, BackendError)):
        text = markdown_safe(str(exc))
    else:
        ref = uuid.uuid4().hex[:6]
        log.exception("unexpected error %s", ref)
        text = UNEXPECTED.format(ref)
    if data_dir:
        base = os.path.abspath(data_dir)
        text = text.replace(base + os.sep, "").replace(base, ".")
    return f"⚠ {text}"


def markdown_safe(text: str) -> str:
    """`text` for a Markdown line: `<` and `&` escaped outside `code spans` (a page would take
    them for HTML), kept inside them (where Markdown shows them as typed; an entity there would
    be shown literally, e.g. "&lt;trace.jsonl&gt;")."""
    parts = text.split("`")
    if len(parts) % 2 == 0:        # an unpaired backtick: no code spans to keep
        return html.escape(text, quote=False)
    return "`".join(part if i % 2 else html.escape(part, quote=False) for i, part in enumerate(parts))


def note(text: str) -> str:
    """A note for the message line (a success said where the eye is, in the line's quieter
    colour: theme.py `.tab-note`), never a toast. `text` is plain text (escaped here)."""
    return f"<span class='tab-note'>{html.escape(text, quote=False)}</span>"


def preparing_note(part: str) -> str | None:
    """While the part's data is still being made (a Space's first start builds the example data
    behind the page; components/common/preparing.py): the note for the tab's message line, with
    how far it is; None once the part is ready (or failed: the tab then says what is missing)."""
    status = preparing.status(part)
    if not status.waiting:
        return None
    done = f" ({status.fraction:.0%})" if 0 < status.fraction < 1 else ""
    return note(f"⏳ {status.message}{done}")


def poll(active: bool) -> Any:
    """The tab's preparation timer: on while its data is being made (it asks again each tick)."""
    return gr.Timer(active=active)


def message_line(elem_id: str) -> gr.Markdown:
    """A tab's one message line (errors and notes, where the eye is: just above the stage)."""
    return gr.Markdown("", elem_id=elem_id, elem_classes=["tab-message", BUSY_CLASS])


#: what an event's kind hands the handler after its inputs (besides "plain": nothing)
KINDS = {
    "plain": "nothing more",
    "select": "the index of the item selected (gr.SelectData.index)",
    "row": "the clicked table row's values (gr.SelectData.row_value)",
    "data": "the data a gr.HTML trigger sent (a dict)",
    "params": "the page's query parameters (a dict)",
    "request": "the gr.Request (its session_hash names the visitor)",
    "user": "the signed-in Hugging Face user's name, or None",
    "visit": "the page's query parameters, then the signed-in user's name or None",
    "progress": "keyword `progress`: gradio's progress bar (a gr.Progress)",
}


class TabEvents:
    """The one event adapter: wires handlers to gradio listeners, with views by class and one
    error policy. Every tab, its runs panels, the Model panel and the study page wire their
    events here (tests/test_layers.py checks that nothing else in components/ does).

    `tab` is what every handler gets first: the tab's shared data (or a function giving it at each
    call: a tab that reads its data on page load), or a panel's own context object (the Model
    panel's `ModelPanel`, the study page's `Study`). `registry`: the per-visitor resources, handed
    second (`handler(tab, res, session, *inputs)`); None for a page without them (the Model panel,
    the study page: `handler(tab, *inputs)`). `message` is the message line every event ends with.
    `address`: (the tab's hidden address box, `link(tab, session) -> query string`): every event
    wired by `on` / `on_open` whose view carries a `session` also writes the link to the view that
    session shows, so the page's address follows the view."""

    def __init__(self, tab: Any, registry: SessionRegistry | None, message: gr.Markdown, *,
                 data_dir: str | Path | None = None,
                 address: tuple[gr.Textbox, Callable[[Any, Any], str]] | None = None,
                 components: Any = None) -> None:
        self._tab = tab
        self.components = components
        self.registry = registry
        self.message = message
        self.data_dir = data_dir
        self.address = address if address is not None and address[0] is not None else None

    def tab(self) -> Any:
        return self._tab() if callable(self._tab) else self._tab

    def outputs_of(self, outs: type[View]) -> list:
        """The output components of the View class `outs`: the components its fields name in the
        layout's `components`."""
        if not (isinstance(outs, type) and issubclass(outs, View)):
            raise TypeError(f"{outs!r}: an event's outputs are a View class (its fields name the components)")
        if self.components is None:
            raise ValueError(f"{outs.__name__}: TabEvents needs the layout's components to find its outputs")
        return outs.components(self.components)

    def fn(self, handler: Callable[..., Any], view_type: type[View], *, kind: str = "plain",
           drop_repeat: bool = False, addressed: bool = False, n_inputs: int | None = None) -> Callable[..., Any]:
        """`handler(tab[, res], *inputs[, extra])` as a gradio function whose outputs are the
        view's, then the message line (then the address box when `addressed`). kind: see KINDS.
        drop_repeat: a copy of the visitor's last call (a Dropdown's double `input`,
        Resources.repeated) changes nothing. addressed: the outputs end with the tab's address
        box (see the class). n_inputs: how many inputs the event has; the function then shows
        gradio the handler's names and defaults for them (`_mirrored`)."""
        if kind not in KINDS:
            raise ValueError(f"kind {kind!r}: one of {', '.join(KINDS)}")
        if drop_repeat and self.registry is None:
            raise ValueError("drop_repeat needs the per-visitor resources (a registry)")
        n_out = view_type.size()
        data_dir = self.data_dir
        event = getattr(handler, "__qualname__", repr(handler))
        link = self.address[1] if addressed and self.address is not None else None
        tail = [SKIP] if link is not None else []
        registry = self.registry

        def single(values: list) -> Any:
            # gradio takes a list returned for ONE output as that output's value
            return values[0] if len(values) == 1 else values

        def failed(exc: BaseException) -> Any:
            return single([SKIP] * n_out + [error_line(exc, data_dir), *tail])

        def address_of(tab: Any, value: View) -> list:
            if link is None:
                return []
            session = getattr(value, "session", UNCHANGED)
            if session is UNCHANGED or session is None or isinstance(session, dict):
                return [SKIP]
            try:
                return [link(tab, session)]
            except Exception:  # noqa: BLE001 - the address is a courtesy; the view is shown anyway
                log.exception("the view's address could not be made")
                return [SKIP]

        def shown(value: Any, tab: Any = None) -> Any:
            if not isinstance(value, view_type):
                raise TypeError(f"{event} returned {type(value).__name__}, not the {view_type.__name__} its event shows")
            return single([*outputs(value), message_value(value), *address_of(tab, value)])

        def bound(request: gr.Request | None) -> tuple[Any, Any, tuple]:
            """The tab (or the panel's context), then the visitor's resources where there are any."""
            if registry is None:
                return self.tab(), None, ()
            res = registry.get(getattr(request, "session_hash", None))
            return self.tab(), res, (res,)

        def working(res: Any) -> Any:
            return res.working() if res is not None else contextlib.nullcontext()

        # a run (a generator, or a handler given a progress bar) counts as the visitor's running
        # work while it runs: a Stop then is for it, and a closing page waits for it
        if inspect.isgeneratorfunction(handler):
            def stream(request: gr.Request, *args) -> Iterator[Any]:
                try:
                    tab, res, first = bound(request)   # inside: a tab whose data fails to read says so
                    with working(res):
                        for value in handler(tab, *first, *args):
                            yield shown(value, tab)   # the tab's data: the address names the view
                except Exception as exc:  # noqa: BLE001 - shown on the message line
                    yield failed(exc)
            return _mirrored(_named(stream, handler), handler, 1 + (registry is not None), n_inputs)

        def call(request: gr.Request | None, args: tuple, extra: dict) -> Any:
            try:
                tab, res, first = bound(request)
                if drop_repeat and res.repeated(event, args):
                    return single([SKIP] * (n_out + 1 + len(tail)))
                if kind != "progress":
                    return shown(handler(tab, *first, *args, **extra), tab)
                with working(res):
                    return shown(handler(tab, *first, *args, **extra), tab)
            except Exception as exc:  # noqa: BLE001 - shown on the message line
                return failed(exc)

        def params_of(request: gr.Request | None) -> dict:
            return dict(getattr(request, "query_params", None) or {})

        def user_of(profile: Any) -> str | None:
            return getattr(profile, "username", None) if profile is not None else None

        if kind == "select":
            def fn(request: gr.Request, evt: gr.SelectData, *args):
                return call(request, (*args, evt.index), {})
        elif kind == "row":
            def fn(request: gr.Request, evt: gr.SelectData, *args):
                return call(request, (*args, list(evt.row_value or []) if evt is not None else []), {})
        elif kind == "data":
            def fn(request: gr.Request, evt: gr.EventData, *args):
                return call(request, (*args, dict(evt._data or {})), {})
        elif kind == "params":
            def fn(request: gr.Request, *args):
                return call(request, (*args, params_of(request)), {})
        elif kind == "request":
            def fn(request: gr.Request, *args):
                return call(request, (*args, request), {})
        elif kind == "user":
            def fn(request: gr.Request, profile: gr.OAuthProfile | None, *args):
                return call(request, (*args, user_of(profile)), {})
        elif kind == "visit":
            def fn(request: gr.Request, profile: gr.OAuthProfile | None, *args):
                return call(request, (*args, params_of(request), user_of(profile)), {})
        elif kind == "progress":
            # positional, before *args: gradio hands a progress bar only to a positional parameter
            def fn(request: gr.Request, progress=gr.Progress(), *args):
                return call(request, args, {"progress": progress})
        else:
            def fn(request: gr.Request, *args):
                return call(request, args, {})
        return _mirrored(_named(fn, handler), handler, 1 + (registry is not None), n_inputs)

    def on(self, listener: Callable[..., Any] | Sequence[Any], handler: Callable[..., Any], inputs: list,
           outs: type[View], *, kind: str = "plain", drop_repeat: bool = False,
           message: gr.Markdown | None = None, addressed: bool = True, **kw) -> Any:
        """`listener(handler)` with the outputs of the View class `outs` (the components its fields
        name; see `outputs_of`), then the message line (drop_repeat: see `fn`; for a Dropdown's
        `input`). `listener` is one listener (`button.click`, `demo.load`, `event.then`) or a list
        of them (one event for all: `gr.on`). `message`: another line for this event's message,
        beside the control that caused it (a button far below the tab's line). `addressed=False`:
        no address box (an event whose view never names the session, fired often: a timer's)."""
        components = self.outputs_of(outs)
        gradio_fn = self.fn(handler, outs, kind=kind, drop_repeat=drop_repeat, addressed=addressed,
                            n_inputs=len(inputs))
        targets = [*components, *self._tail(message, addressed=addressed)]
        if not callable(listener):
            return gr.on(list(listener), gradio_fn, inputs, targets, **kw)
        return listener(gradio_fn, inputs, targets, **kw)

    def _tail(self, message: gr.Markdown | None = None, *, addressed: bool = True) -> list:
        """The outputs every wired event ends with: the message line, then the address box."""
        return [message or self.message, *([self.address[0]] if addressed and self.address is not None else [])]

    def on_open(self, ctx: TabContext, handler: Callable[..., Any], inputs: list, outs: type[View], *,
                api_name: str, view: str = "page", addressed: bool = True, **kw) -> Any:
        """A view of the tab drawn once per visitor, when the tab is first shown: `handler(tab,
        res, *inputs, params)`, `view` naming it (the tab's page view; a second one, e.g. Cloze's
        runs link, draws beside it). gradio sends the tab its Tabs show as the page mounts a select
        event (the link's tab: page.link_tab_head), with the page's query parameters, and another
        tab its select when the visitor opens it; so a page draws only the tab it shows and sends
        no request at all for the others (a load event per tab cost the page load a request each,
        ~30 % of it on a busy machine). A tab on a page of its own (no Tabs) draws on the page's
        load. `addressed`: as `on`'s. Returns the event, to chain on."""
        components = self.outputs_of(outs)
        draw = self.fn(handler, outs, kind="params", addressed=addressed)
        targets = [*components, *self._tail(addressed=addressed)]
        if ctx.tab is None:
            return ctx.demo.load(draw, inputs, targets, api_name=api_name, **kw)
        untouched = [SKIP] * len(targets)

        def on_shown(request: gr.Request, *args):
            res = self.registry.get(getattr(request, "session_hash", None))
            if view in res.opened:
                return untouched
            res.opened.add(view)
            return draw(request, *args)

        event = ctx.tab.select(_named(on_shown, handler), inputs, targets, api_name=api_name, **kw)
        if view == "page" and ctx.tab.elem_id and ctx.demo is not None:
            # the tab takes clicks once this has answered (page.view_wait_css, in the page's CSS)
            event.then(None, js=view_drawn_js(ctx.tab.elem_id))
            ctx.demo.views_awaited = [*getattr(ctx.demo, "views_awaited", []), ctx.tab.elem_id]
        return event

    def over(self, components: Any) -> TabEvents:
        """This adapter naming its outputs from `components` instead (a control wired alike in
        every tab, e.g. Stop: `{"stop": button}`)."""
        other = copy.copy(self)
        other.components = components
        return other

    def release_on(self, demo: gr.Blocks) -> None:
        """The page's unload event releases the visitor (`release`)."""
        demo.unload(self.release)

    def release(self, request: gr.Request) -> None:
        """The page closed: that visitor's running work stops, then its resources go; once no
        tab holds the visitor any more, the backends their settings built are closed too."""
        session_hash = getattr(request, "session_hash", None)
        if self.registry is not None:
            self.registry.release(session_hash)
        if session_hash and not held_anywhere(session_hash):
            release_backends(session_hash)


def _mirrored(fn: Callable[..., Any], handler: Callable[..., Any], skip: int, n_inputs: int | None) -> Callable[..., Any]:
    """`fn` (gradio's function: its own leading parameters, then `*args`) showing gradio the
    handler's parameters for the event's `n_inputs` inputs (after its first `skip`: the tab, the
    resources): gradio names an endpoint's parameters by them and lets a client leave out one whose
    default is None (an API caller of an older version keeps its arguments). Left as it is where
    the two cannot be joined (a progress bar's default before them, a parameter of the same name)."""
    if n_inputs is None:
        return fn
    try:
        own = [p for p in inspect.signature(fn).parameters.values() if p.kind is not p.VAR_POSITIONAL]
        theirs = list(inspect.signature(handler).parameters.values())[skip:skip + n_inputs]
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if len(theirs) < n_inputs or any(p.kind not in positional for p in theirs):
            return fn
        fn.__signature__ = inspect.Signature(
            [*own, *(p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=inspect.Parameter.empty)
                     for p in theirs)])
    except (TypeError, ValueError):
        pass
    return fn


def _named(fn: Callable[..., Any], handler: Callable[..., Any]) -> Callable[..., Any]:
    # not functools.wraps: gradio reads the signature (gr.Request, gr.Progress) through __wrapped__
    fn.__name__ = fn.__qualname__ = getattr(handler, "__name__", "handler")
    return fn
