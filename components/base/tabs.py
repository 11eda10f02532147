"""The tab registry: every tab (benchmark) of the app named once, in one row (docs/architecture.md,
"How to add a benchmark").

A row is a `TabSpec`, kept in the tab's own folder (`components/<tab>/spec.py`, `SPEC = TabSpec(...)`);
`SPEC_MODULES` below lists those modules in the order the tabs show. Everything that lists tabs
reads `tabs()`: app.py (the tabs, their batch commands, their runs and start-up warm-ups), the
example generators (examples/generate.py), the data preparation (components/common/preparing.py),
a repository's layout (components/datasource/repos.py), the page's CSS (components/common/theme.py),
a tab alone (components/common/standalone.py) and tests/test_layers.py.

A row holds names and module paths only (strings, a CSS file's path): a spec module imports
nothing but this module, so reading the registry imports no tab code; each caller imports the
module a row names when it needs it (`load`). The rows are read on the first call, not at import:
components/common and components/datasource read the registry without importing any tab.

`APP_EXTRA_TABS` (a comma list of spec modules, e.g. `tests.fourth_tab.spec`) adds rows after the
listed ones: how tests/fourth_tab is served without any file of the app naming it. A child process
(the example data's generation) inherits it.
"""
from __future__ import annotations

import importlib
import os
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

#: the tabs, in the order they show: one spec module per tab
SPEC_MODULES = ("components.window_search.spec", "components.cloze.spec", "components.impact.spec")
EXTRA_ENV = "APP_EXTRA_TABS"


@dataclass(frozen=True, kw_only=True)
class TabSpec:
    """One tab, named once. Where a name differs from `id`, the row says so (and why)."""

    #: the tab's folder and Python package name (components/<id>/): one spelling
    id: str
    #: the tab's label in the page
    title: str
    #: the benchmark's own name (the standalone page's title says "<title> (<benchmark>)")
    benchmark: str = ""
    #: the link's `?tab=` value and the panel's element id `tab-<url>`; default: id with "-"
    url: str = ""
    #: the folder under --data-dir; also the batch commands' target (`app.py eval <data>`), the
    #: example part (`examples.generate --only <data>`) and the preparation part; default: id
    data: str = ""
    #: the prefix of its components' element ids (`#<prefix>-...`), which its CSS selectors use;
    #: default: url
    prefix: str = ""
    #: the Python package holding ui/, cli.py, ...; default: the spec module's package
    package: str = ""
    #: the parameters of its links (a link carrying one of them opens the tab)
    link_keys: tuple[str, ...] = ()
    #: the example generator: a module with `generate(out_dir, seed=0, progress=None)`
    generator: str = ""
    #: what in its data folder says the data is there, any one of: "name" a file, "name/" a
    #: folder, "*/name/" a folder in any subfolder
    holds: tuple[str, ...] = ()
    #: the top-level keys of an annotations.json that make a repository folder this benchmark alone
    annotation_keys: tuple[str, ...] = ()
    #: seconds its example data takes to generate (2 cores): the preparation builds the first
    #: tab's part first, then the quickest first
    example_seconds: float = 0.0
    #: relative to the package: the UI module (`build_tab(ctx)`, optional `warm(data_dir)`), the
    #: batch commands (`add_eval_parsers`, `add_run_parsers`, `add_compare_parsers`; "" none),
    #: the runs loader for app.start_runs ("module:function" taking (data_dir, named); "" none),
    #: the tab's own CSS file ("" none)
    ui: str = "ui"
    cli: str = "cli"
    runs: str = ""
    css: str = "ui/style.css"
    #: set by the registry: the folder of `package`
    folder: Path = field(default=Path(), compare=False)

    def __post_init__(self) -> None:
        defaults = {"url": self.url or self.id.replace("_", "-"), "data": self.data or self.id}
        defaults["prefix"] = self.prefix or defaults["url"]
        for name, value in defaults.items():
            object.__setattr__(self, name, value)

    @property
    def long_title(self) -> str:
        return f"{self.title} ({self.benchmark})" if self.benchmark else self.title

    @property
    def ui_module(self) -> str:
        return f"{self.package}.{self.ui}"

    @property
    def cli_module(self) -> str | None:
        return f"{self.package}.{self.cli}" if self.cli else None

    def load(self, role: str) -> Any:
        """The object a role names, imported now: "ui", "cli" (modules), "runs" (the loader
        function), "generator" (the module); None for a role the row leaves empty."""
        if role == "generator":
            return importlib.import_module(self.generator) if self.generator else None
        if role == "runs":
            if not self.runs:
                return None
            module, _, name = self.runs.partition(":")
            return getattr(importlib.import_module(f"{self.package}.{module}"), name)
        name = {"ui": self.ui_module, "cli": self.cli_module}[role]
        return importlib.import_module(name) if name else None

    def css_text(self) -> str:
        """The tab's own CSS ("" when it has none)."""
        if not self.css:
            return ""
        return (self.folder / self.css).read_text(encoding="utf-8")


_lock = threading.Lock()
_loaded: tuple[TabSpec, ...] | None = None


def spec_modules() -> tuple[str, ...]:
    """The spec modules read: the listed ones, then those of $APP_EXTRA_TABS."""
    extra = [m.strip() for m in os.environ.get(EXTRA_ENV, "").split(",") if m.strip()]
    return SPEC_MODULES + tuple(m for m in extra if m not in SPEC_MODULES)


def _read(module_name: str) -> TabSpec:
    module = importlib.import_module(module_name)
    spec = getattr(module, "SPEC", None)
    if not isinstance(spec, TabSpec):
        raise TypeError(f"{module_name} has no SPEC = TabSpec(...) (components/base/tabs.py)")
    package = spec.package or module_name.rpartition(".")[0]
    folder = Path(importlib.import_module(package).__file__).resolve().parent
    return replace(spec, package=package, folder=folder)


def tabs() -> tuple[TabSpec, ...]:
    """Every tab's row, in the order they show (read once; `reload()` reads again)."""
    global _loaded
    with _lock:
        if _loaded is None:
            specs = tuple(_read(name) for name in spec_modules())
            for attr in ("id", "url", "data", "prefix", "title"):
                seen = [getattr(s, attr) for s in specs]
                twice = sorted({v for v in seen if seen.count(v) > 1})
                if twice:
                    raise ValueError(f"two tabs share the {attr} {', '.join(twice)} (components/base/tabs.py)")
            _loaded = specs
        return _loaded


def reload() -> tuple[TabSpec, ...]:
    """Read the rows again (after $APP_EXTRA_TABS changed: tests)."""
    global _loaded
    with _lock:
        _loaded = None
    return tabs()


def tab(key: str) -> TabSpec:
    """The row whose id, url or data folder is `key`."""
    for spec in tabs():
        if key in (spec.id, spec.url, spec.data):
            return spec
    raise KeyError(f"no tab {key!r}; the tabs are {', '.join(s.id for s in tabs())}")


def data_folders() -> tuple[str, ...]:
    """Every tab's data folder (the preparation's parts, the example parts), in tab order."""
    return tuple(spec.data for spec in tabs())
