"""A tab takes no click (and Cloze and Impact no key) until its first view has answered. A click
sent before raced the view, which answered last and overwrote it: on a slow server, a Cloze mode
picked as the page appeared came back as Practice (components/common/page.py, VIEW_WAIT_CSS; the
keys: components/cloze/ui/page.py, components/impact/ui/page.py).

The slow server is the test's own app, whose Cloze or Impact page view waits until the test lets
it (a gate around the view's handler, put in before that app is built; the session's other app is
untouched). 1440x900."""
from __future__ import annotations

import functools
import threading
from contextlib import contextmanager

from components.cloze.ui import handlers
from components.impact.ui import handlers as impact_handlers
from tests.browser.conftest import idle, snap
from tests.helpers.live_app import running_app

VIEW = {"width": 1440, "height": 900}
DRAWN = "(id) => (document.documentElement.dataset.drawn || '').split(' ').includes(id)"
DIMMED = "() => +getComputedStyle(document.querySelector('#tab-cloze > *')).opacity < 1"
HIT = """(el) => { const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  return el.contains(hit) || hit.contains(el) && hit !== document.getElementById('tab-cloze'); }"""


@contextmanager
def app_page(browser, data_dir, monkeypatch, module, name: str, view, link: str):
    """`link` opened on an app of its own whose page view `module.name` is `view` (in place of
    the handler, wrapping it)."""
    monkeypatch.setattr(module, name, functools.wraps(getattr(module, name))(view))
    context = browser.new_context(viewport=VIEW)
    try:
        with running_app(data_dir) as url:
            page = context.new_page()
            page.goto(url.rstrip("/") + link, wait_until="load", timeout=120_000)
            yield page
    finally:
        context.close()


@contextmanager
def cloze_page(browser, data_dir, monkeypatch, view):
    """A Cloze link on an app whose Cloze page view is `view`, and that page's Model radio."""
    with app_page(browser, data_dir, monkeypatch, handlers, "open_page", view, "/?tab=cloze") as page:
        yield page, page.locator("#tab-cloze").get_by_role("radio", name="Model", exact=True)


def held_until(gate: threading.Event, real):
    """`real`, once the test opens `gate`."""
    def held(*args, **kwargs):
        gate.wait(120)
        return real(*args, **kwargs)
    return held


def test_a_tab_takes_clicks_once_its_first_view_has_answered(browser, example_data_dir, monkeypatch):
    gate = threading.Event()
    with cloze_page(browser, example_data_dir, monkeypatch, held_until(gate, handlers.open_page)) as (page, model):
        try:
            model.wait_for(timeout=120_000)
            # the view is held: a click at Model reaches the tab behind it, which says it is busy
            assert not page.evaluate(HIT, model.element_handle())
            assert page.evaluate("() => getComputedStyle(document.querySelector('#tab-cloze')).cursor") == "progress"
            page.wait_for_function(DIMMED, timeout=30_000)   # a slow view: the tab dims
            snap(page, "view-first-held")
            assert not page.evaluate(DRAWN, "tab-cloze")
            page.keyboard.press("b")   # a key is held too, and says so where the letters are
            page.wait_for_function("() => (document.querySelector('#cloze-key-note')?.textContent || '')"
                                   ".includes('still on its way')", timeout=30_000)
            gate.set()
            page.wait_for_function(DRAWN, arg="tab-cloze", timeout=60_000)
            assert page.evaluate(HIT, model.element_handle())
            assert page.evaluate("() => getComputedStyle(document.querySelector('#tab-cloze > *')).opacity") == "1"
            model.click()
            page.get_by_role("button", name="Run this question").wait_for(timeout=60_000)
            idle(page)
            # the view answered before the mode was sent: the mode picked is the mode shown
            assert model.is_checked()
            assert not page.get_by_text("Practice playthrough: answers are kept").is_visible()
        finally:
            gate.set()   # before the app closes: its held view returns


def test_impact_frame_keys_wait_for_the_first_view(browser, example_data_dir, monkeypatch):
    """A frame key before the view would step the frame box the view is about to set, and its
    frame's answer could land after the view's (components/impact/ui/page.py)."""
    gate = threading.Event()
    link = "/?tab=impact&clip=h0007&frame=46"
    with app_page(browser, example_data_dir, monkeypatch, impact_handlers, "on_load",
                  held_until(gate, impact_handlers.on_load), link) as page:
        try:
            frame = page.locator("#impact-frame input[type=range]")
            frame.wait_for(timeout=120_000)
            before = frame.input_value()
            page.keyboard.press(".")   # the key's handler runs within the press
            assert frame.input_value() == before
            assert not page.evaluate(DRAWN, "tab-impact")
            gate.set()
            page.wait_for_function(DRAWN, arg="tab-impact", timeout=60_000)
            page.wait_for_function("() => document.querySelector('#impact-frame input[type=range]').value === '46'",
                                   timeout=60_000)
            page.keyboard.press(".")
            page.wait_for_function("() => document.querySelector('#impact-frame input[type=range]').value === '47'",
                                   timeout=60_000)
        finally:
            gate.set()


def test_every_tab_of_the_page_is_drawn_and_takes_clicks(page):
    """Each tab's first view marks it: a tab left unmarked would take no click at all."""
    for tab, label in (("tab-window-search", "Window search"), ("tab-cloze", "Cloze"), ("tab-impact", "Impact")):
        page.get_by_role("tab", name=label).click()
        page.wait_for_function(DRAWN, arg=tab, timeout=60_000)
        cursor = page.evaluate("(id) => getComputedStyle(document.getElementById(id)).cursor", tab)
        assert cursor != "progress", (tab, cursor)


def test_a_tab_whose_first_view_fails_still_takes_clicks(browser, example_data_dir, monkeypatch):
    """A view that fails must not leave its tab held for good."""
    def broken(*args, **kwargs):
        raise RuntimeError("the view broke")

    with cloze_page(browser, example_data_dir, monkeypatch, broken) as (page, model):
        page.wait_for_function(DRAWN, arg="tab-cloze", timeout=120_000)
        assert page.evaluate(HIT, model.element_handle())
        model.click()
        page.get_by_role("button", name="Run this question").wait_for(timeout=60_000)
