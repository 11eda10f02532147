"""The study page as an annotator meets it, in headless Chromium at 1440x900 and 390x844: the whole
question on one screen, a reload resumes with blind on, nothing in the DOM, the URLs or any response
names an option before confirmation, no download buttons; the researcher view needs the token."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from components.cloze.study.app import launch_study
from tests.browser.conftest import ARTIFACTS
from tests.cloze.test_study_flow import make_study
from tests.helpers.live_app import free_port

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TOKEN = "browser-test-token"
OPTION = re.compile(r"\b(GT|Rand[123]|Early|Late|Wide|Reverse|Shuffle|Loop)\b|\b(before|after)\.mp4")
# every response body, read chunk by chunk as it arrives: the event stream (SSE) that carries the
# handlers' outputs never ends while the page is open, so waiting for its whole text sees nothing
RECORD_BODIES = """
window.__bodies = [];
const _fetch = window.fetch;
window.fetch = async (...args) => {
  const r = await _fetch(...args);
  try {
    const reader = r.clone().body.getReader(), decoder = new TextDecoder(), url = String(args[0]);
    (async () => {
      for (;;) {
        const {done, value} = await reader.read();
        if (done) break;
        window.__bodies.push(url + ' ' + decoder.decode(value, {stream: true}));
      }
    })();
  } catch (e) {}
  return r;
};
"""
LETTER_PARTS = ["#study-choice-A", "#study-choice-B", "#study-choice-C", "#study-choice-D"]
PARTS = ["#study-frames img", *LETTER_PARTS]
# on a phone the frames image is shown as its six strips, one under another (page.py)
PHONE_PARTS = [f"#study-frames .study-piece[aria-label='{x}']" for x in ("BEGINNING", "END", "A", "B", "C", "D")]
VIDEO_PARTS = ["#study-beginning", "#study-end", "#study-cand-A", "#study-cand-B", "#study-cand-C",
               "#study-cand-D", "#study-choice-A", "#study-choice-D"]


@pytest.fixture(scope="module")
def study_url(cloze_examples, tmp_path_factory):
    import os

    data = make_study(cloze_examples, tmp_path_factory.mktemp("study-data"), display="frames")
    os.environ["APP_STUDY_RESEARCHER_TOKEN"] = TOKEN
    os.environ.pop("APP_STUDY", None)
    demo = launch_study(data, port=free_port(), prevent_thread_lock=True)
    try:
        yield demo.local_url.rstrip("/"), data
    finally:
        demo.close()
        os.environ.pop("APP_STUDY_RESEARCHER_TOKEN", None)


def _set_display(data: Path, display: str) -> None:
    path = data / "cloze" / "study.json"
    cfg = json.loads(path.read_text())
    cfg["display"] = display
    path.write_text(json.dumps(cfg))


def _open(browser, url: str, size: tuple[int, int]):
    page = browser.new_page()
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.add_init_script(RECORD_BODIES)
    page.urls = []
    page.on("request", lambda r: page.urls.append(r.url))
    page.set_default_timeout(60_000)
    page.goto(url, wait_until="load", timeout=120_000)
    page.wait_for_selector("#study-progress", timeout=120_000)
    return page


def _as_new_annotator(page) -> None:
    """Forget the annotator this browser stored. The page that just loaded may still be resuming
    the stored one (its answer writes the id back), so wait for that, clear, reload, and check."""
    page.wait_for_timeout(1500)
    page.evaluate("() => localStorage.clear()")
    page.reload(wait_until="load")
    page.wait_for_timeout(1500)
    page.wait_for_function("() => (document.querySelector('#study-progress')?.innerText || '').includes('Enter')")


def _wait_question(page, annotator: str) -> int:
    page.wait_for_function(
        f"() => (document.querySelector('#study-progress')?.innerText || '').includes('{annotator} · question')",
        timeout=60_000)
    text = page.locator("#study-progress").inner_text()
    return int(text.split("question", 1)[1].split("of")[0])


def _all_in_view(page, selectors: list[str]) -> None:
    page.wait_for_timeout(800)
    assert page.evaluate("() => window.scrollY") == 0
    height = page.evaluate("() => window.innerHeight")
    width = page.evaluate("() => window.innerWidth")
    for sel in selectors:
        box = page.locator(sel).first.bounding_box()
        assert box is not None, f"{sel} not shown"
        assert box["y"] >= 0 and box["y"] + box["height"] <= height + 1, (sel, box, height)
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (sel, box, width)


def _no_leak(page) -> None:
    html = page.content()
    assert not OPTION.search(html), OPTION.search(html).group(0)
    for url in page.urls:
        assert not OPTION.search(url), url
    for body in page.evaluate("() => window.__bodies"):
        if "/assets/" in body.split(" ", 1)[0]:
            continue
        m = OPTION.search(body)
        assert not m, body[max(0, m.start() - 200):m.end() + 100]
    assert page.locator("#study-root a[download], #study-root button[aria-label*='ownload']").count() == 0
    for absent in ("#cloze-mode", "#cloze-root", "#cloze-compare", "#cloze-upload"):
        assert page.locator(absent).count() == 0


def _parts(display: str, size: tuple[int, int]) -> list[str]:
    if display == "video":
        return VIDEO_PARTS
    return PARTS if size[0] > 600 else [*PHONE_PARTS, *LETTER_PARTS]


def test_on_a_phone_the_frames_are_six_strips_at_full_width(browser, study_url):
    url, data = study_url
    _set_display(data, "frames")
    page = _open(browser, url, (390, 844))
    _as_new_annotator(page)
    page.locator("#study-annotator input, #study-annotator textarea").first.fill("anon-strips")
    page.locator("#study-start").click()
    _wait_question(page, "anon-strips")
    page.wait_for_selector("#study-frames .study-split[data-src]")
    _all_in_view(page, [*PHONE_PARTS, *LETTER_PARTS])
    assert not page.locator("#study-frames img").first.is_visible()      # the strips stand in for it
    strips = [page.locator(sel).first.bounding_box() for sel in PHONE_PARTS]
    assert all(b["width"] >= 0.8 * 390 for b in strips), strips           # each strip the column's width
    assert [b["y"] for b in strips] == sorted(b["y"] for b in strips)     # BEGINNING, END, A-D downwards
    src = page.locator("#study-frames img").first.get_attribute("src")
    positions = page.evaluate("() => [...document.querySelectorAll('#study-frames .study-piece')]"
                              ".map(p => [p.style.backgroundImage, p.style.backgroundPosition])")
    assert positions == [[f'url("{src}")', pos] for pos in
                         ("0% 0%", "100% 0%", "0% 50%", "100% 50%", "0% 100%", "100% 100%")]
    page.locator("#study-choice-B").click()                              # the next question's image
    page.wait_for_function("() => document.querySelector('#study-feedback')?.innerText.includes('saved')")
    page.wait_for_function("() => document.querySelector('#study-frames .study-split')?.dataset.src === "
                           "document.querySelector('#study-frames img')?.src")
    assert page.locator("#study-frames img").first.get_attribute("src") != src
    page.close()


@pytest.mark.parametrize("size,display", [((1440, 900), "frames"), ((390, 844), "frames"),
                                          ((1440, 900), "video"), ((390, 844), "video")])
def test_study_screen_fits_resumes_blind_and_leaks_nothing(browser, study_url, size, display):
    url, data = study_url
    _set_display(data, display)
    annotator = f"anon-{display}-{size[0]}"
    page = _open(browser, url, size)
    _as_new_annotator(page)
    page.locator("#study-annotator input, #study-annotator textarea").first.fill(annotator)
    page.locator("#study-start").click()
    first = _wait_question(page, annotator)
    _all_in_view(page, _parts(display, size))
    _no_leak(page)
    ARTIFACTS.mkdir(exist_ok=True)
    # the docs' screenshots are refreshed on request only: a test run never edits tracked files
    shot = DOCS if display == "frames" and os.environ.get("UPDATE_DOCS_SCREENSHOTS") else ARTIFACTS
    suffix = "" if display == "frames" else "-video"
    page.screenshot(path=str(shot / f"study-{size[0]}x{size[1]}{suffix}.png"))
    page.locator("#study-choice-B").click()
    page.wait_for_function("() => document.querySelector('#study-feedback')?.innerText.includes('saved')")
    second = _wait_question(page, annotator)
    assert second != first
    feedback = page.locator("#study-feedback").inner_text()
    assert "Correct" not in feedback and "true middle" not in feedback       # blind
    _no_leak(page)
    page.reload(wait_until="load")                                         # resumes where it was
    assert _wait_question(page, annotator) == second
    assert page.locator("#study-annotator input, #study-annotator textarea").first.input_value() == annotator
    _all_in_view(page, _parts(display, size))
    page.locator("#study-choice-C").click()
    page.wait_for_function("() => document.querySelector('#study-feedback')?.innerText.includes('saved')")
    assert "true middle" not in page.locator("#study-feedback").inner_text()   # blind survived the reload
    _no_leak(page)
    seen = page.evaluate("() => window.__bodies")
    assert any("process_completed" in b for b in seen), seen[:5]   # the scan saw the handlers' outputs
    page.close()


def test_researcher_view_needs_the_token(browser, study_url):
    url, _ = study_url
    page = _open(browser, url, (1440, 900))
    assert not page.locator("#study-token").is_visible()
    page.goto(url + "/?researcher=1", wait_until="load")
    page.wait_for_selector("#study-token", state="visible")
    page.locator("#study-token input").fill("wrong")
    page.locator("#study-show").click()
    page.wait_for_selector("text=Wrong or missing researcher token")
    assert "Human (paper)" not in page.locator("#study-summary").inner_text()
    page.locator("#study-token input").fill(TOKEN)
    page.locator("#study-show").click()
    page.wait_for_function("() => document.querySelector('#study-summary')?.innerText.includes('Human (paper)')")
    page.close()


def test_the_clock_runs_in_the_page_and_an_answered_question_stays_locked(browser, study_url):
    url, data = study_url
    _set_display(data, "frames")
    annotator = "anon-clock"
    page = _open(browser, url, (1440, 900))
    _as_new_annotator(page)
    page.locator("#study-annotator input, #study-annotator textarea").first.fill(annotator)
    page.locator("#study-start").click()
    first = _wait_question(page, annotator)
    clock = page.locator("#study-progress .study-clock")
    page.wait_for_timeout(1000)
    before, calls = clock.inner_text(), len(page.urls)
    page.wait_for_timeout(2500)
    assert clock.inner_text() != before                      # it ticks ...
    # ... with no event sent to the server (the question's image may still be loading then)
    assert [u for u in page.urls[calls:] if "/queue/join" in u] == []
    page.locator("#study-choice-A").click()
    page.wait_for_function(f"() => !(document.querySelector('#study-progress')?.innerText || '')"
                           f".includes('question {first} of')")
    page.locator(f"#study-navigator [data-q='{first - 1}']").click()   # back to the answered one
    page.wait_for_function(f"() => document.querySelector('#study-progress')?.innerText"
                           f".includes('question {first} of')")
    page.wait_for_function("() => document.querySelector('#study-choice-A')?.disabled === true")
    assert "study-marked" in page.locator("#study-choice-A").get_attribute("class")
    assert page.locator("#study-choice-B").is_disabled() and page.locator("#study-change").is_visible()
    cell = page.locator(f"#study-navigator [data-q='{first - 1}']")
    assert "answered" in cell.get_attribute("class") and "answered" in cell.get_attribute("title")
    page.locator("#study-change").click()
    page.wait_for_function("() => document.querySelector('#study-choice-B')?.disabled === false")
    assert not page.locator("#study-change").is_visible()
    page.locator("#study-choice-B").click()
    page.wait_for_function("() => document.querySelector('#study-feedback')?.innerText.includes('changed')")
    page.close()
