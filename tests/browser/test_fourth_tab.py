"""A fourth benchmark is one folder plus one registry row (issue 36): tests/fourth_tab (a row, a
layout, one handler, a generator, its CSS), registered through $APP_EXTRA_TABS alone, has its
example data built by the preparation's own child process (`python -m examples.generate --only
fourth`), and is served by the whole app in headless Chromium: its tab shows after the three,
a link with its own parameter opens it, its CSS is on the page, and its handler answers a click
with the generated data."""
from __future__ import annotations

import json

import pytest

from components.base import tabs as registry
from components.common import preparing
from examples import generate
from tests.helpers.live_app import running_app

EXTRA = "tests.fourth_tab.spec"


@pytest.fixture
def fourth_tab(monkeypatch):
    monkeypatch.setenv(registry.EXTRA_ENV, EXTRA)
    registry.reload()
    yield registry.tab("fourth")
    monkeypatch.delenv(registry.EXTRA_ENV)
    registry.reload()


@pytest.fixture
def four_parts(example_data_dir, tmp_path):
    """The example data of the three tabs (links) and no fourth part yet."""
    root = tmp_path / "data"
    root.mkdir()
    for part in ("grounding", "cloze", "impact"):
        (root / part).symlink_to((example_data_dir / part).resolve())
    return root


def test_the_fourth_tab_reads_its_row_everywhere(fourth_tab, four_parts):
    assert fourth_tab.package == "tests.fourth_tab" and fourth_tab.folder.name == "fourth_tab"
    assert [s.url for s in registry.tabs()] == ["window-search", "cloze", "impact", "fourth"]
    assert preparing.parts()[-1] == "fourth" and generate.example_parts()[-1] == "fourth"
    # the preparation builds the one missing part with its real command: a child process that
    # finds the fourth row through the environment it inherits
    prep = preparing.Preparation(four_parts, examples=True).start()
    assert prep.wait(300)
    assert [prep.status(p).state for p in preparing.parts()] == ["ready"] * 4
    assert prep.status("fourth").source == "examples" and (four_parts / "fourth" / ".complete").exists()
    items = json.loads((four_parts / "fourth" / "items.json").read_text())["items"]
    assert [i["id"] for i in items] == ["item-1", "item-2", "item-3"]


def test_the_fourth_tab_is_served_and_answers_a_click(fourth_tab, four_parts, browser):
    generate.generate_part("fourth", four_parts)
    with running_app(four_parts) as url:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.goto(url + "?item=item-2", wait_until="load")   # its own link parameter opens it
        page.wait_for_function("() => !!document.getElementById('tab-fourth')?.offsetParent")
        labels = page.get_by_role("tab").all_inner_texts()
        assert [t.strip() for t in labels] == ["Window search", "Cloze", "Impact", "Fourth"]
        assert page.get_by_role("tab", name="Fourth").get_attribute("aria-selected") == "true"
        tab_box = page.get_by_role("tab", name="Fourth").bounding_box()
        assert tab_box["width"] > 0 and tab_box["y"] + tab_box["height"] <= 60   # on the header line
        # the dropdown holds the generated items; Answer asks the handler
        assert page.locator("#fourth-item input").input_value() == "item-1"
        page.locator("#fourth-ask").click()
        page.wait_for_function("() => /What is 1 \\+ 1\\? 2/.test(document.querySelector('#fourth-answer')?.innerText || '')")
        # the tab's own CSS (tests/fourth_tab/style.css), joined after the shared CSS by its row
        style = page.evaluate("""() => { const s = getComputedStyle(document.querySelector('#fourth-answer'));
            return [s.borderLeftWidth, s.borderLeftColor, s.paddingLeft]; }""")
        assert style == ["6px", "rgb(214, 40, 40)", "12px"]
        context.close()
