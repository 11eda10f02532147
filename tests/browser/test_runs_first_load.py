"""The first load of runs, said where the person looks (issue 37: "every action longer than 1 s
shows progress where the person is looking ... the first load of runs"). A runs panel opened
before the server's background read of the run files is done shows "Reading run files… k of N"
in the panel's own box, the count growing as files are read (the runs timer the panels have asks
each second), then the runs.

The read is made observable without slowing the app: the test's own server (a data folder of its
own, so its loaders are new) reads each run file only when the test lets it, through a gate put
around `components.common.runs.read_run` for the files under that folder alone (the session's other
app is untouched). 1440x900."""
from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from components.common import runs
from tests.browser.conftest import settle, snap
from tests.helpers.live_app import running_app

VIEW = {"width": 1440, "height": 900}
COUNT = re.compile(r"Reading run files… (\d+) of (\d+)")


class Gate:
    """Lets the app's loaders read one run file of a tab's folder at a time, when the test says."""

    def __init__(self, root: Path):
        self.root = str(root)
        self.allowed: dict[str, int] = {}
        self.cond = threading.Condition()
        self.opened = False

    def part(self, path) -> str | None:
        text = str(path)
        if not text.startswith(self.root + "/"):
            return None
        return text[len(self.root) + 1:].split("/", 1)[0]

    def wait_turn(self, path) -> None:
        part = self.part(path)
        if part is None:
            return
        with self.cond:
            self.cond.wait_for(lambda: self.opened or self.allowed.get(part, 0) > 0, timeout=300)
            if self.allowed.get(part, 0) > 0:
                self.allowed[part] -= 1

    def let(self, part: str, n: int = 1) -> None:
        with self.cond:
            self.allowed[part] = self.allowed.get(part, 0) + n
            self.cond.notify_all()

    def open(self) -> None:
        with self.cond:
            self.opened = True
            self.cond.notify_all()


@pytest.fixture(scope="module")
def gated_app(example_data_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("runs-first-load")
    for part in ("grounding", "cloze", "impact"):   # the example data, read through a folder of its own
        (root / part).symlink_to((example_data_dir / part).resolve())
    gate = Gate(root)
    real = runs.read_run

    def gated(reader, path, cache):
        gate.wait_turn(path)
        return real(reader, path, cache)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runs, "read_run", gated)
        patch.setenv("APP_HUMAN_STUDY_DIR", str(tmp_path_factory.mktemp("human-study-gated")))
        patch.setenv("APP_PRACTICE_DIR", str(tmp_path_factory.mktemp("practice-gated")))
        try:
            with running_app(root) as url:
                yield url, gate, root
        finally:
            gate.open()


def _shown_count(page, panel: str) -> tuple[int, int] | None:
    """(k, N) from the panel's "Reading run files… k of N", when it is shown on screen at 1440x900:
    its text's box inside the viewport and inside the panel's box."""
    found = page.evaluate("""(sel) => {
        const panel = document.querySelector(sel); if (!panel) return null;
        const note = [...panel.querySelectorAll('p, span')].find(e => /Reading run files/.test(e.innerText || ''));
        if (!note) return null;
        const n = note.getBoundingClientRect(), p = panel.getBoundingClientRect();
        const style = getComputedStyle(note);
        const inside = n.width > 0 && n.height > 0 && n.top >= 0 && n.bottom <= innerHeight + 0.5 && n.left >= 0
            && n.right <= innerWidth && n.top >= p.top - 1 && n.bottom <= p.bottom + 1
            && style.visibility !== 'hidden' && +style.opacity > 0;
        return inside ? note.innerText : 'hidden: ' + JSON.stringify({n: [n.top, n.bottom, n.left, n.right],
            p: [p.top, p.bottom], vis: style.visibility, op: style.opacity, h: innerHeight}); }""", panel)
    if found is None or found.startswith("hidden: "):
        print(panel, found)
        return None
    match = COUNT.search(found)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _wait_count(page, panel: str, least: int, timeout_s: float = 60) -> tuple[int, int]:
    """The panel's count once it is at least `least` (the runs timer redraws it each second)."""
    page.wait_for_function("""([sel, least]) => { const p = document.querySelector(sel);
        const m = p && /Reading run files… (\\d+) of (\\d+)/.exec(p.innerText || '');
        return !!m && +m[1] >= least; }""", arg=[panel, least], timeout=timeout_s * 1000)
    page.locator(panel).scroll_into_view_if_needed()   # where the person looks: the panel in view
    settle(page, panel)
    shown = _shown_count(page, panel)
    assert shown is not None, f"the progress line of {panel} is not on screen in the panel's box"
    return shown



def _counts_one_more(page, gate, kind: str, panel: str) -> int:
    """The panel says "Reading run files… k of N" while the read is held, and its count follows
    one more file let through; returns N."""
    page.wait_for_function(f"() => /Reading run files/.test(document.querySelector('{panel}')?.innerText || '')",
                           timeout=120_000)
    page.locator(panel).scroll_into_view_if_needed()
    k, n = _wait_count(page, panel, 0)
    assert n >= 2 and k < n
    gate.let(kind, 1)
    assert _wait_count(page, panel, k + 1)[0] >= k + 1
    return n

def test_a_runs_panel_opened_before_the_runs_are_read_counts_them_then_shows_them(browser, gated_app,
                                                                                   example_data_dir):
    url, gate, root = gated_app
    files = sorted((example_data_dir / "grounding" / "runs").glob("*.jsonl"))
    assert len(files) >= 3
    page = browser.new_page(viewport=VIEW)
    page.set_default_timeout(60_000)
    try:
        page.goto(url.rstrip("/") + "/?tab=window-search", wait_until="load", timeout=120_000)
        page.wait_for_function("() => (document.querySelector('#ws-query textarea')?.value || '').length > 0",
                               timeout=120_000)
        panel = "#ws-runs-panel"
        page.locator(panel).scroll_into_view_if_needed()
        k, n = _wait_count(page, panel, 0)
        assert (k, n) == (0, len(files))               # listed, none read: the panel says so at once
        gate.let("grounding", 1)
        assert _wait_count(page, panel, 1) == (1, len(files))   # the count follows the read, live
        snap(page, "ws-runs-first-load-1440x900")
        gate.let("grounding", len(files))
        page.wait_for_selector(f"{panel} .ws-runs[data-state='ready']", timeout=60_000)
        assert page.locator(f"{panel} .ws-runs-row[data-run]").count() == len(files)
        assert "Reading run files" not in page.locator(panel).inner_text()
    finally:
        page.close()


def test_the_impact_panel_counts_its_run_files_at_the_linked_frame_then_shows_the_runs(browser, gated_app,
                                                                                        example_data_dir):
    from components.impact.data import load_annotations

    url, gate, root = gated_app
    item = load_annotations(example_data_dir / "impact" / "annotations.json").items[0]
    frame = sorted(item.frames)[0]
    page = browser.new_page(viewport=VIEW)
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{url.rstrip('/')}/?tab=impact&clip={item.qid}&frame={frame}", wait_until="load",
                  timeout=120_000)
        panel = "#impact-runs-panel"
        n = _counts_one_more(page, gate, "impact", panel)
        gate.let("impact", n)
        page.wait_for_selector(f"{panel} .impact-runs-frame[data-frame='{frame}']", timeout=60_000)
        assert "Reading run files" not in page.locator(panel).inner_text()
    finally:
        page.close()


def test_the_cloze_panel_counts_its_run_files_then_shows_the_runs(browser, gated_app):
    url, gate, root = gated_app
    page = browser.new_page(viewport=VIEW)
    page.set_default_timeout(60_000)
    try:
        page.goto(url.rstrip("/") + "/?tab=cloze&stem=bar_fill&q=P&mode=model", wait_until="load", timeout=120_000)
        panel = "#cloze-runs-panel"
        _counts_one_more(page, gate, "cloze", panel)
        gate.open()
        page.wait_for_function(f"() => document.querySelector('{panel} .runs-panel')?.dataset.state === 'ready'",
                               timeout=120_000)
        assert "Reading run files" not in page.locator(panel).inner_text()
    finally:
        page.close()
