"""The tab registry (components/base/tabs.py): one row per tab, read by every list of tabs; a row
from tests/ ($APP_EXTRA_TABS) reaches each of them; one name per tab, with the row saying where a
name differs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import app
from components.base import tabs as registry
from components.common import preparing, standalone
from components.common.theme import CSS, page_css
from components.datasource import repos
from examples import generate

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fourth(monkeypatch):
    monkeypatch.setenv(registry.EXTRA_ENV, "tests.fourth_tab.spec")
    registry.reload()
    yield registry.tab("fourth_tab")
    monkeypatch.delenv(registry.EXTRA_ENV)
    registry.reload()


def test_each_tab_is_named_once_and_its_row_says_where_a_name_differs():
    rows = {spec.id: (spec.title, spec.url, spec.data, spec.prefix, spec.package) for spec in registry.tabs()}
    assert rows == {
        "window_search": ("Window search", "window-search", "grounding", "ws", "components.window_search"),
        "cloze": ("Cloze", "cloze", "cloze", "cloze", "components.cloze"),
        "impact": ("Impact", "impact", "impact", "impact", "components.impact"),
    }
    # the lists that were five hand-kept tuples now read these rows
    assert preparing.parts() == generate.example_parts() == registry.data_folders() == ("grounding", "cloze", "impact")
    assert {spec.data: spec.generator for spec in registry.tabs()} == {
        "grounding": "examples.movie", "cloze": "examples.cloze_data", "impact": "examples.impact_clips"}
    # the tab's link name in its own links module is its row's
    from components.window_search import links
    assert links.TAB == registry.tab("window_search").url


def test_two_rows_with_one_name_are_refused(monkeypatch):
    monkeypatch.setattr(registry, "SPEC_MODULES", (*registry.SPEC_MODULES, "components.cloze.spec"))
    with pytest.raises(ValueError, match="two tabs share the id cloze"):
        registry.reload()
    monkeypatch.undo()
    registry.reload()


def test_the_app_assembles_its_tabs_from_the_registry(example_data_dir):
    demo = app.build_app(example_data_dir)
    tabs = [b for b in demo.blocks.values() if type(b).__name__ == "Tab"]
    assert [(t.label, t.id, t.elem_id) for t in tabs] == [
        ("Window search", "window-search", "tab-window-search"), ("Cloze", "cloze", "tab-cloze"),
        ("Impact", "impact", "tab-impact")]
    parser = app.build_parser()
    targets = parser._subparsers._group_actions[0].choices["eval"]._subparsers._group_actions[0].choices
    # a batch target is named by its tab's data folder (impact has two: impact-temporal, impact-spatial)
    assert {t.split("-")[0] for t in targets} == {"grounding", "cloze", "impact"}


def test_each_tab_css_lives_in_its_folder_and_the_page_joins_it_after_the_shared_css():
    css = page_css(registry.tabs())
    assert css.startswith(CSS)
    places = [css.index(spec.css_text()) for spec in registry.tabs()]
    assert places == sorted(places) and places[0] >= len(CSS)
    assert "#cloze-grid" in registry.tab("cloze").css_text() and "#cloze-grid" not in CSS
    alone = page_css([registry.tab("impact")])   # a tab alone carries its own CSS only
    assert "#impact-main" in alone and "#cloze-grid" not in alone and "#ws-movie" not in alone


def test_the_standalone_page_of_each_tab_comes_from_its_row(example_data_dir):
    assert [standalone._spec(f"{spec.package}.ui").id for spec in registry.tabs()] == \
        ["window_search", "cloze", "impact"]   # each ui/__main__.py passes its package
    texts = {(ROOT / "components" / s.id / "ui" / "__main__.py").read_text() for s in registry.tabs()}
    assert len(texts) == 1   # one file, nothing of its tab in it
    assert standalone.build_parser("grounding").prog == "python -m components.window_search.ui"
    demo = standalone.build_demo("cloze", example_data_dir)
    assert demo.title == "Cloze (TempCloze)"
    out = subprocess.run([sys.executable, "-m", "components.impact.ui", "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "The Impact (HAPACT) tab alone" in out.stdout and "impact/" in out.stdout


def test_a_row_from_tests_reaches_every_list(fourth, tmp_path):
    assert fourth.url == "fourth" and fourth.data == "fourth" and fourth.folder == ROOT / "tests" / "fourth_tab"
    assert preparing.parts() == ("grounding", "cloze", "impact", "fourth")
    assert preparing.build_order()[0] == "grounding" and preparing.build_order()[1] == "fourth"  # quickest
    assert generate.example_parts()[-1] == "fourth"
    generate.generate_part("fourth", tmp_path)
    assert preparing.has_data(tmp_path, "fourth") and not preparing.has_data(tmp_path, "cloze")
    assert "#fourth-answer" in page_css(registry.tabs())
    # a repository holding the fourth part is a data folder
    index = repos.Index({"fourth/items.json": 10})
    assert repos.detect_layout(None, "c0", index) == "data"
    # the tab alone: its layout built from its generated data
    demo = standalone.build_demo("fourth", tmp_path)
    assert {"fourth-item", "fourth-ask", "fourth-answer"} <= {getattr(b, "elem_id", None) for b in demo.blocks.values()}
    assert "fourth_answer" in {fn.api_name for fn in demo.fns.values()}
