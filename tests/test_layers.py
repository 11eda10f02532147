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
