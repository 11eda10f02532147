"""The floor and the names every tab shares (docs/architecture.md): components/base imports nothing
of the project; backends, datasource, media and settings import nothing of common; the tabs use
one file name per role; every list of tabs reads the tab registry (components/base/tabs.py) and no
tab's CSS selector sits in components/common."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from components.base.tabs import SPEC_MODULES, tabs

ROOT = Path(__file__).resolve().parents[1]
#: the app's own tabs (the registry's listed rows: not a test's extra one)
TABS = tuple(spec.id for spec in tabs() if f"{spec.package}.spec" in SPEC_MODULES)


def project_imports(path: Path) -> set[str]:
    """The project modules `path` imports (top-level or inside functions)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] in {"components", "backends", "app", "examples"}}


def files(*folders: str) -> list[Path]:
    return [p for folder in folders for p in sorted((ROOT / folder).rglob("*.py"))]


def test_the_base_floor_imports_nothing_of_the_project():
    offenders = {str(p.relative_to(ROOT)): sorted(n for n in project_imports(p) if not n.startswith("components.base"))
                 for p in files("components/base")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_backends_data_sources_media_and_settings_stand_on_the_floor_only():
    lower = files("backends", "components/datasource", "components/media", "components/settings")
    upward = {str(p.relative_to(ROOT)): sorted(n for n in project_imports(p) if n.startswith("components.common"))
              for p in lower}
    assert {k: v for k, v in upward.items() if v} == {}


def test_every_tab_names_each_role_alike():
    roles = ("data.py", "metrics", "prompts", "replies.py", "solvers.py", "pipeline.py", "links.py", "view.py",
             "runs.py", "cli.py", "ui/layout.py", "ui/views.py", "ui/session.py", "ui/handlers/__init__.py",
             "ui/handlers/runs_panel.py")
    missing = [f"{tab}/{role}" for tab in TABS for role in roles
               if not any((ROOT / "components" / tab / name).exists() for name in (role, f"{role}.py"))]
    assert missing == []
    # one meaning per file name: intervals are the shared time intervals only, handlers a package
    assert sorted(str(p.relative_to(ROOT)) for p in (ROOT / "components").rglob("intervals.py")) == \
        ["components/common/intervals.py"]
    assert not [p for p in (ROOT / "components").rglob("*_handlers.py")]
    assert not [p for tab in TABS for p in (ROOT / "components" / tab / "ui").glob("handlers.py")]


def test_every_tab_session_module_holds_its_data_resources_and_registry():
    import importlib

    for tab, data in (("window_search", "WindowSearchTab"), ("cloze", "ClozeTab"), ("impact", "ImpactTab")):
        session = importlib.import_module(f"components.{tab}.ui.session")
        assert hasattr(session, data), (tab, data)
        assert hasattr(session, "RESOURCES") and not hasattr(session, "SESSIONS"), tab
        resources = type(session.RESOURCES.get(f"layers-{tab}"))
        assert resources.__name__.endswith("Resources") and resources.__name__ != "Resources", tab
        session.RESOURCES.release(f"layers-{tab}")


def test_every_wired_handler_takes_the_tab_first_as_tab():
    import importlib
    import inspect

    for tab in TABS:
        package = importlib.import_module(f"components.{tab}.ui.handlers")
        for name in package.__all__:
            fn = getattr(package, name)
            if not inspect.isfunction(fn):
                continue
            params = list(inspect.signature(fn).parameters)
            if len(params) >= 3 and params[1] == "res":
                assert params[0] == "tab", f"{tab}: {name}({', '.join(params[:3])}, ...)"


def _tab_names() -> set[str]:
    return {name for spec in tabs() for name in (spec.id, spec.url, spec.data, spec.title)}


def test_every_tab_list_reads_the_registry():
    """No literal tuple, list, set or dict naming two tabs or more in components/, app.py or
    examples/ (a tab's own spec.py row aside): each reads components/base/tabs.py."""
    names = _tab_names()
    lists = []
    for path in [*files("components", "examples"), ROOT / "app.py"]:
        if path.name == "spec.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                items = node.elts
            elif isinstance(node, ast.Dict):
                items = [k for k in node.keys if k is not None]
            else:
                continue
            # a name, or a row of a table (a tuple or list inside) that names a tab
            inner = [e for i in items if isinstance(i, (ast.Tuple, ast.List)) for e in i.elts]
            named = {i.value for i in [*items, *inner] if isinstance(i, ast.Constant) and isinstance(i.value, str)} & names
            if len(named) >= 2:
                lists.append(f"{path.relative_to(ROOT)}:{node.lineno} {sorted(named)}")
    assert lists == []


def test_every_tab_has_a_registry_row_and_its_css_in_its_folder():
    rows = {spec.id: spec for spec in tabs()}
    folders = sorted(p.parent.parent.name for p in (ROOT / "components").glob("*/ui/layout.py"))
    assert sorted(TABS) == folders   # a tab folder without a row (or a row without a folder) fails here
    for tab in TABS:
        spec = rows[tab]
        assert spec.folder == ROOT / "components" / tab and (spec.folder / spec.css).is_file(), tab
        own = set(re.findall(r"#([a-z0-9]+)-", spec.css_text()))
        assert own <= {spec.prefix, "tab"}, (tab, own)   # a tab's CSS names its own elements only
    # a spec module is a row: it imports the registry and nothing else of the project
    for tab in TABS:
        assert project_imports(ROOT / "components" / tab / "spec.py") <= {
            "components.base.tabs", "components.base.tabs.TabSpec"}, tab


def test_no_tab_selector_sits_in_common():
    """components/common holds only what every tab shares: no selector or element id of one tab
    (`#<prefix>-...`, `.<prefix>-...`, `#tab-<url>`)."""
    pattern = re.compile("|".join(rf"[#.]{re.escape(spec.prefix)}-|#tab-{re.escape(spec.url)}\b"
                                  for spec in tabs()))
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()[:80]}"
             for p in sorted((ROOT / "components" / "common").rglob("*")) if p.suffix in (".py", ".css", ".js")
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert found == []


# -- one event adapter (components/common/ui.py TabEvents) ---------------------------------------
#: gradio's listener methods (a component's event, a page's load / unload, a chained event)
LISTENERS = {"click", "change", "input", "select", "submit", "tick", "load", "unload", "then", "success",
             "failure", "expand", "collapse", "release", "upload", "blur", "focus", "clear", "play", "pause",
             "stop", "end", "edit", "like", "stream", "key_up", "copy", "download", "apply", "delete",
             "double_click", "start_recording", "stop_recording", "change_tab", "retry", "undo"}
ADAPTER = "components/common/ui.py"
#: keywords only a gradio listener takes
EVENT_KEYWORDS = {"inputs", "outputs", "api_name", "js", "show_progress", "queue", "trigger_mode", "preprocess",
                  "postprocess", "concurrency_limit", "concurrency_id", "show_progress_on", "every", "cancels"}


def _gradio_modules() -> list[Path]:
    """The modules of components/ that import gradio (the only ones that can wire an event)."""
    return [p for p in files("components") if "gradio" in {n.split(".")[0] for n in _imported(p)}]


def _imported(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _python_wiring(path: Path) -> list[str]:
    """The events `path` wires to a Python function itself, outside the adapter: `gr.on(...)` or a
    listener call (`x.click(fn, ...)`, `demo.load(fn, ...)`, `event.then(fn, ...)`) whose function
    (first argument or `fn=`) is anything but the constant None. A listener given None with `js=`
    runs in the page alone (no request, no handler, nothing to fail on the server) and is allowed;
    `TabEvents.on(listener, ...)` passes the listener on uncalled, so it is not a call here."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name = node.func.attr
        is_gr_on = name == "on" and isinstance(node.func.value, ast.Name) and node.func.value.id == "gr"
        if not is_gr_on and name not in LISTENERS:
            continue
        args = node.args[1:] if is_gr_on else node.args
        fn = args[0] if args else next((k.value for k in node.keywords if k.arg == "fn"), None)
        if fn is None and not is_gr_on:
            continue   # no function at all: not an event wiring (e.g. `resources.release()`)
        wired = is_gr_on or name == "unload" or len(args) >= 2 or any(k.arg in EVENT_KEYWORDS for k in node.keywords)
        if not wired:
            continue   # one argument and none of an event's keywords: a pool's `submit(work)`, `release(key)`
        if isinstance(fn, ast.Constant) and fn.value is None:
            continue
        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:90]}")
    return found


def _view_classes() -> dict[str, tuple[Path, ast.ClassDef]]:
    """Every class of components/ that is a View (by its bases, followed by name across modules)."""
    classes: dict[str, list[tuple[Path, ast.ClassDef]]] = {}
    for path in files("components"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, []).append((path, node))

    def is_view(node: ast.ClassDef, seen: frozenset = frozenset()) -> bool:
        for base in node.bases:
            name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
            if name == "View":
                return True
            if name in classes and name not in seen and any(is_view(n, seen | {name}) for _, n in classes[name]):
                return True
        return False

    return {f"{path.relative_to(ROOT)}::{node.name}": (path, node)
            for found in classes.values() for path, node in found if is_view(node)}


def adapter_counts() -> dict[str, int | list[str]]:
    """What the one-adapter rule counts (the numbers the report gives): events wired outside the
    adapter, `on()` calls given a bare output list, `gr.skip()` outside common/ui.py, view fields
    with a default other than UNCHANGED (`several(n)` is UNCHANGED for n outputs; a view's
    `message` default is the message line's, "" or None), view fields typed `Any`."""
    wiring = [w for p in _gradio_modules() if str(p.relative_to(ROOT)) != ADAPTER for w in _python_wiring(p)]
    bare, skips, other_default, typed_any, fields = [], [], [], [], 0
    for path in files("components"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
                called = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
                if called == "on" and len(node.args) >= 4 and isinstance(node.args[3], (ast.List, ast.Tuple)):
                    bare.append(f"{rel}:{node.lineno}")
                on_gr = isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", None) == "gr"
                if called == "skip" and on_gr and rel != ADAPTER:
                    skips.append(f"{rel}:{node.lineno}")
            if isinstance(node, ast.ImportFrom) and node.module == "components.common.ui" and rel != ADAPTER \
                    and any(alias.name == "SKIP" for alias in node.names):
                skips.append(f"{rel}:{node.lineno} (imports SKIP)")   # gr.skip() by another name
    for name, (_, node) in _view_classes().items():
        for stmt in node.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            if stmt.target.id.startswith("_"):
                continue
            if stmt.target.id == "message":
                continue   # the message line's own default ("" clears it, None leaves it)
            fields += 1
            value = stmt.value
            several = isinstance(value, ast.Call) and getattr(value.func, "id", None) == "several"
            if value is not None and not several:
                other_default.append(f"{name}.{stmt.target.id}")
            annotation = stmt.annotation
            if any(isinstance(n, ast.Name) and n.id == "Any" and not _inside_subscript(annotation, n)
                   for n in ast.walk(annotation)):
                typed_any.append(f"{name}.{stmt.target.id}")
    return {"wiring": wiring, "bare": bare, "skips": skips, "other_default": other_default,
            "typed_any": typed_any, "fields": fields}


def _inside_subscript(annotation: ast.expr, name: ast.Name) -> bool:
    """Whether `Any` is an argument of a container type (`dict[str, Any]`: a JSON-like value whose
    component is known), not the field's own type."""
    return any(isinstance(n, ast.Subscript) and any(m is name for m in ast.walk(n.slice)) for n in ast.walk(annotation))


def test_there_is_one_event_adapter():
    """Every event of components/ that runs Python is wired by TabEvents (components/common/ui.py):
    the tabs, their runs panels, the Model panel, the study page and the page's link opener alike.
    No event is wired to a Python function anywhere else (`gr.on(...)`, `x.click(fn, ...)`,
    `demo.load(fn, ...)`, `event.then(fn, ...)`; page-only `js=` events with no function are
    allowed), no `on()` is given a bare list of outputs instead of a view class, no `gr.skip()`
    is written outside the adapter (a view's UNCHANGED is it), and every view field defaults to
    UNCHANGED and is typed by its component, not `Any`."""
    counts = adapter_counts()
    assert counts["fields"] > 100   # the views were found
    assert counts["wiring"] == []
    assert counts["bare"] == []
    assert counts["skips"] == []
    assert counts["other_default"] == []
    assert counts["typed_any"] == []
