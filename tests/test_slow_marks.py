"""Every test that starts a live app is marked `slow`, so `make test-fast` (`-m "not slow"`) leaves it
out. tests/system and tests/browser are slow as folders (tests/conftest.py); elsewhere a test is
found to start an app when it, a fixture it asks for, or a function of its module that it calls
calls `running_app` (tests/helpers/live_app.py), a Blocks' `launch` or `launch_study`."""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SLOW_FOLDERS = {"system", "browser", "helpers", ".cache"}
LAUNCHERS = {"running_app", "launch", "launch_study"}
#: the files of the issue: a live app in each, outside tests/system and tests/browser
LIVE_APP_FILES = ["tests/window_search/test_pipeline_ui.py", "tests/common/test_idle.py",
                  "tests/cloze/test_study_space.py", "tests/test_app_ui.py", "tests/test_settings.py",
                  "tests/cloze/test_study_access.py"]


def _is_fixture(node: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(d) for d in node.decorator_list)


def _marked_slow(decorators: list[ast.expr]) -> bool:
    return any(ast.unparse(d).replace("pytest.", "").startswith("mark.slow") for d in decorators)


def _module_slow(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets)
               and "mark.slow" in ast.unparse(node.value) for node in tree.body)


def _functions(tree: ast.AST) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def _conftest_fixtures(path: Path) -> dict[str, ast.FunctionDef]:
    """The fixtures of every conftest.py from tests/ down to `path`'s folder."""
    out: dict[str, ast.FunctionDef] = {}
    folder = TESTS
    for part in [None, *path.relative_to(TESTS).parts[:-1]]:
        folder = folder if part is None else folder / part
        conftest = folder / "conftest.py"
        if conftest.exists():
            out.update({name: f for name, f in _functions(ast.parse(conftest.read_text())).items()
                        if _is_fixture(f)})
    return out


def launching_tests(path: Path) -> list[tuple[str, bool]]:
    """(test name, marked slow) for every test of `path` that starts a live app."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    local = _functions(tree)
    fixtures = {**_conftest_fixtures(path), **{n: f for n, f in local.items() if _is_fixture(f)}}
    memo: dict[str, bool] = {}

    def launches(func: ast.FunctionDef) -> bool:
        key = f"{id(func)}"
        if key in memo:
            return memo[key]
        memo[key] = False
        called = {c.func.id if isinstance(c.func, ast.Name) else c.func.attr
                  for c in ast.walk(func) if isinstance(c, ast.Call)
                  and isinstance(c.func, (ast.Name, ast.Attribute))}
        params = {a.arg for a in func.args.args + func.args.kwonlyargs}
        memo[key] = bool(called & LAUNCHERS) \
            or any(launches(local[name]) for name in called if name in local and name != func.name) \
            or any(launches(fixtures[name]) for name in params if name in fixtures)
        return memo[key]

    module_slow = _module_slow(tree)
    out = []
    for node in tree.body:
        scope = [(node, [])] if isinstance(node, ast.FunctionDef) else \
            [(m, node.decorator_list) for m in node.body if isinstance(m, ast.FunctionDef)] \
            if isinstance(node, ast.ClassDef) else []
        for func, outer in scope:
            if func.name.startswith("test_") and launches(func):
                out.append((func.name, module_slow or _marked_slow(func.decorator_list + outer)))
    return out


def test_the_slow_mark_is_registered():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    markers = config["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("slow:") for m in markers), markers


def test_every_test_that_starts_a_live_app_is_marked_slow():
    unmarked, found = [], set()
    for path in sorted(TESTS.rglob("test_*.py")):
        if SLOW_FOLDERS & set(path.relative_to(TESTS).parts):
            continue
        for name, slow in launching_tests(path):
            found.add(str(path.relative_to(ROOT)))
            if not slow:
                unmarked.append(f"{path.relative_to(ROOT)}::{name}")
    assert not unmarked, "start a live app but are not marked slow:\n" + "\n".join(unmarked)
    assert set(LIVE_APP_FILES) <= found, set(LIVE_APP_FILES) - found   # the scan sees them all
