"""No app function is there for the tests alone (issue 36): every public module-level function of
components/ and backends/ has a caller outside tests/ (the app, scripts/, examples/), or is one
of the few named below, each with why it stays. A test-only helper belongs in tests/ (e.g.
tests/helpers/runs.py). The scan is by syntax: a use is a name imported from the function's
module, a `module.name` attribute, or the name used inside its own module."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: "module:function" -> why it stays where it is
KNOWN = {
    # process-state resets the tests use between cases (a server never forgets what it loaded)
    "components.impact.body:clear_body_cache": "reset of the loaded bodies",
    "components.cloze.study.cache:invalidate": "reset of the loaded study sets",
    "components.cloze.study.routing:forget": "reset of the study routers",
    "components.cloze.study.store:forget_stores": "reset of the annotators' stores",
    "components.datasource.repos:forget_all": "reset of the opened repositories and mounts",
    "components.datasource.mounts:mounts": "the mounts open now (tests inspect them)",
    # extension points, public by design
    "backends.registry:register": "how a new backend family is added (docs/architecture.md)",
    "components.base.tabs:reload": "the registry read again (a tab added by APP_EXTRA_TABS)",
    # another change of issue 36 moves these (impact's role table, the batch rate, the study page)
    "components.impact.geodesic:distance_matrix": "full geodesic rows for small meshes, impact",
    "components.impact.metrics.spatial:spatial_metrics": "impact's metrics",
    "components.impact.metrics.spatial:spatial_metrics_from_records": "impact's metrics",
    "components.impact.metrics.temporal:recall_matches_at_k": "impact's metrics",
    "components.impact.solvers:baseline_regions": "impact's solvers",
    "backends.openai_api:hung_worst_case_s": "the batch rate's change",
    "components.cloze.study.design:export_assignment": "the study page's design export",
    "components.cloze.study.protocol:load_set_folder": "the study protocol",
    "components.common.intervals:pairs_in_text": "the reply-pair finders",
    "components.common.intervals:format_mmss": "the reply-pair finders",
}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _files(*names: str) -> list[Path]:
    out: list[Path] = []
    for name in names:
        path = ROOT / name
        out += [path] if path.is_file() else sorted(path.rglob("*.py")) if path.is_dir() else []
    return out


def _uses(files: list[Path], defined: set[tuple[str, str]]) -> set[tuple[str, str]]:
    used: set[tuple[str, str]] = set()
    any_attr: set[str] = set()
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module, aliases = _module(path), {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    used.add((node.module, a.name))
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and (module, node.id) in defined:
                used.add((module, node.id))
            elif isinstance(node, ast.Attribute):
                parts, value = [], node.value
                while isinstance(value, ast.Attribute):
                    parts.append(value.attr)
                    value = value.value
                if isinstance(value, ast.Name) and value.id in aliases:
                    used.add((".".join([aliases[value.id], *reversed(parts)]), node.attr))
                else:
                    any_attr.add(node.attr)   # obj.name: the object's module is not known
    return used | {(m, n) for m, n in defined if n in any_attr}


def _used(uses: set[tuple[str, str]], key: tuple[str, str]) -> bool:
    module, name = key
    return key in uses or any(n == name and module.startswith(m + ".") for m, n in uses)   # re-exports


def test_no_app_function_is_there_for_the_tests_alone():
    defined = set()
    for path in _files("components", "backends"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                defined.add((_module(path), node.name))
    app = _uses(_files("components", "backends", "app.py", "scripts", "examples"), defined)
    tests = _uses(_files("tests"), defined)
    only = sorted(f"{m}:{n}" for m, n in defined if not _used(app, (m, n)) and _used(tests, (m, n)))
    assert [name for name in only if name not in KNOWN] == []
