"""The study page as an annotator meets it, in headless Chromium at 1440x900 and 390x844: an
invitation link opens it (a wrong or missing one opens nothing and changes nothing), a short
instruction and a practice question come first, the letters only with a question, the whole
question on one screen, a reload resumes at the first unanswered question with blind on, nothing in
the DOM, the URLs or any response names an option, the time a slow media load takes is not counted
as thinking, and the researcher view needs the token (a wrong one: one line, old results hidden).

`UPDATE_DOCS_SCREENSHOTS=1` writes docs/study-*.png (otherwise test-artifacts/)."""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from components.cloze.study import access
from components.cloze.study import handlers as h
from components.cloze.study.app import launch_study
from components.cloze.study.practice import ANSWER
from components.base.io import read_jsonl
from tests.browser.conftest import ARTIFACTS, idle, settle, settled_text
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
    data = make_study(cloze_examples, tmp_path_factory.mktemp("study-data"), display="frames",
                      access="invite", practice=True)
    os.environ["APP_STUDY_RESEARCHER_TOKEN"] = TOKEN
    os.environ.pop("APP_STUDY", None)
    demo = launch_study(data, port=free_port(), prevent_thread_lock=True)
    try:
        yield demo.local_url.rstrip("/"), data
    finally:
        demo.close()
        os.environ.pop("APP_STUDY_RESEARCHER_TOKEN", None)


def _config(data: Path):
    return h.Study(str(data)).config


def _link(url: str, data: Path, annotator: str) -> str:
    token = access.invite(_config(data), [annotator], renew=True)[annotator]
    return access.invite_link(url, token)


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


def _fresh(browser, url: str, size: tuple[int, int]):
    """A page in this browser with no annotator kept from an earlier test."""
    page = _open(browser, url.split("?")[0], size)
    page.evaluate("() => localStorage.clear()")
    page.close()
    return _open(browser, url, size)


def _progress(page) -> str:
    return settled_text(page, "#study-progress")


def _wait_question(page, annotator: str) -> int:
    page.wait_for_function(
        f"() => (document.querySelector('#study-progress')?.innerText || '').includes('{annotator} · question')",
        timeout=60_000)
    return int(_progress(page).split("question", 1)[1].split("of")[0])


def _through_intro(page, annotator: str) -> None:
    """The instruction and the practice question, then Begin."""
    page.wait_for_function(
        f"() => (document.querySelector('#study-progress')?.innerText || '').includes('{annotator} · before you start')")
    page.wait_for_selector("#study-practice-frames img", state="attached")   # a phone shows its strips
    assert page.locator("#study-instruction").is_visible()
    assert not page.locator("#study-choice-A").is_visible()                 # no study letter yet
    page.locator(f"#study-practice-{ANSWER}").click()
    page.wait_for_function("() => document.querySelector('#study-practice-feedback')?.innerText.includes('is right')")
    page.locator("#study-begin").click()


def _all_in_view(page, selectors: list[str]) -> None:
    settle(page, selectors[-1] if selectors else None)
    assert page.evaluate("() => window.scrollY") == 0
    height = page.evaluate("() => window.innerHeight")
    width = page.evaluate("() => window.innerWidth")
    for sel in selectors:
        box = page.locator(sel).first.bounding_box()
        assert box is not None, f"{sel} not shown"
        assert box["y"] >= 0 and box["y"] + box["height"] <= height + 1, (sel, box, height)
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (sel, box, width)


def _no_leak(page, secret: str | None = None) -> None:
    html = page.content()
    assert not OPTION.search(html), OPTION.search(html).group(0)
    for url in page.urls:
        assert not OPTION.search(url), url
    for body in page.evaluate("() => window.__bodies"):
        if "/assets/" in body.split(" ", 1)[0]:
            continue
        m = OPTION.search(body)
        assert not m, body[max(0, m.start() - 200):m.end() + 100]
    # the invitation's token travels only between the annotator's browser and the server (the
    # page's address, and the copy the browser keeps for a reload): never into the page itself
    assert secret is None or secret not in html
    assert page.locator("#study-root a[download], #study-root button[aria-label*='ownload']").count() == 0
    for absent in ("#cloze-mode", "#cloze-root", "#cloze-compare", "#cloze-upload"):
        assert page.locator(absent).count() == 0


def _no_error_shown(page) -> None:
    assert page.locator(".toast-body").count() == 0
    assert page.get_by_text("Error", exact=True).count() == 0


def _parts(display: str, size: tuple[int, int]) -> list[str]:
    if display == "video":
        return VIDEO_PARTS
    return PARTS if size[0] > 600 else [*PHONE_PARTS, *LETTER_PARTS]


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    # the docs' screenshots are refreshed on request only: a test run never edits tracked files
    folder = DOCS if os.environ.get("UPDATE_DOCS_SCREENSHOTS") else ARTIFACTS
    page.screenshot(path=str(folder / name))


def _records(data: Path, annotator: str) -> list[dict]:
    cfg = _config(data)
    return read_jsonl(cfg.results / cfg.study_id / f"{annotator}.jsonl")


def test_on_a_phone_the_frames_are_six_strips_at_full_width(browser, study_url):
    url, data = study_url
    _set_display(data, "frames")
    page = _fresh(browser, _link(url, data, "anon-strips"), (390, 844))
    _through_intro(page, "anon-strips")
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


# the height on screen of a strip's drawn label ("A  (first 2 | last 2)", "C"): its ink in the
# picture (first dark row to the row before the frames begin) times the strip's scale on screen
LABEL_ON_SCREEN = """async ([host, k]) => {
  const img = document.querySelector(host + ' img'), piece = document.querySelectorAll(host + ' .study-piece')[k];
  const c = document.createElement('canvas'); c.width = img.naturalWidth; c.height = img.naturalHeight;
  const g = c.getContext('2d'); g.drawImage(img, 0, 0);
  const w = Math.floor(img.naturalWidth / 2), top = Math.floor(img.naturalHeight / 3) * Math.floor(k / 2);
  const x0 = (k % 2) * w, rows = g.getImageData(x0, top, w, Math.floor(img.naturalHeight / 3)).data;
  let first = -1, last = -1;
  for (let y = 0; y < img.naturalHeight / 3; y++) {
    let dark = 0, filled = 0;
    for (let x = 0; x < w; x++) { const i = (y * w + x) * 4, v = (rows[i] + rows[i + 1] + rows[i + 2]) / 3;
      if (v < 110) dark++; if (v < 235) filled++; }
    if (filled > 0.4 * w) break;            // the frames begin
    if (dark > 0) { if (first < 0) first = y; last = y; }
  }
  return [(last - first + 1) * piece.getBoundingClientRect().width / w, last - first + 1];
}"""


def test_on_a_phone_the_labels_drawn_in_the_pictures_are_12_px_and_more(browser, study_url):
    url, data = study_url
    _set_display(data, "frames")
    page = _fresh(browser, _link(url, data, "anon-labels"), (390, 844))
    page.wait_for_function("() => !!document.querySelector('#study-practice-frames .study-split[data-src]')")
    for k in (2, 5):                                                      # A and D of the practice
        shown, drawn = page.evaluate(LABEL_ON_SCREEN, ["#study-practice-frames", k])
        assert shown >= 12, (k, shown, drawn)
    _through_intro(page, "anon-labels")
    _wait_question(page, "anon-labels")
    page.wait_for_selector("#study-frames .study-split[data-src]")
    page.wait_for_function("() => document.querySelector('#study-frames img')?.complete")
    for k in range(6):                                                    # BEGINNING, END, A-D
        shown, drawn = page.evaluate(LABEL_ON_SCREEN, ["#study-frames", k])
        assert shown >= 12, (k, shown, drawn)
    page.locator("#study-choice-B").click()                              # one answered, one current
    page.wait_for_function("() => document.querySelector('#study-feedback')?.innerText.includes('saved')")
    page.wait_for_function("() => !!document.querySelector('#study-navigator .study-q.answered')")
    heights = page.evaluate("() => [...document.querySelectorAll('#study-navigator .study-nav-grid .study-q')]"
                            ".map(b => b.getBoundingClientRect().height)")
    assert len(heights) >= 3 and max(heights) - min(heights) < 0.5, heights   # one height, answered or not
    page.close()


def test_a_refused_action_is_said_on_the_pages_message_line_never_a_toast(browser, study_url):
    url, data = study_url
    _set_display(data, "frames")
    page = _fresh(browser, _link(url, data, "anon-refused"), (390, 844))
    page.wait_for_function(
        "() => (document.querySelector('#study-progress')?.innerText || '').includes('anon-refused · before you start')")
    page.locator("#study-begin").click()                                 # the practice question not tried
    page.wait_for_function("() => (document.querySelector('#study-message')?.innerText || '').includes('practice')")
    assert page.locator("#study-message").inner_text().startswith("⚠")
    line = page.locator("#study-message").first.bounding_box()
    assert 0 <= line["y"] and line["y"] + line["height"] <= 844               # on the screen, where Begin was
    idle(page)   # the click's event has answered: a toast would be up
    assert page.locator(".toast-body").count() == 0
    page.locator(f"#study-practice-{ANSWER}").click()                    # the next action that works clears it
    page.wait_for_function("() => !(document.querySelector('#study-message')?.innerText || '').trim()")
    page.close()


@pytest.mark.parametrize("size,display", [((1440, 900), "frames"), ((390, 844), "frames"),
                                          ((1440, 900), "video"), ((390, 844), "video")])
def test_study_screen_fits_resumes_blind_and_leaks_nothing(browser, study_url, size, display):
    url, data = study_url
    _set_display(data, display)
    annotator = f"anon-{display}-{size[0]}"
    link = _link(url, data, annotator)
    token = link.split("invite=", 1)[1]
    page = _fresh(browser, link, size)
    _no_leak(page, token)
    if display == "frames":
        settle(page)
        _shot(page, f"study-{size[0]}x{size[1]}-intro.png")
    _through_intro(page, annotator)
    first = _wait_question(page, annotator)
    assert "invite=" not in page.url                                      # out of the address bar
    _all_in_view(page, _parts(display, size))
    _no_leak(page, token)
    _shot(page, f"study-{size[0]}x{size[1]}{'' if display == 'frames' else '-video'}.png")
    page.locator("#study-choice-B").click()
    page.wait_for_function("() => document.querySelector('#study-feedback')?.innerText.includes('saved')")
    second = _wait_question(page, annotator)
    assert second != first
    feedback = page.locator("#study-feedback").inner_text()
    assert "Correct" not in feedback and "true middle" not in feedback       # blind
    assert _records(data, annotator)[0]["timing"] == "page"                  # the media were seen shown
    _no_leak(page, token)
    page.reload(wait_until="load")                                         # resumes: the first unanswered
    assert _wait_question(page, annotator) == second
    _all_in_view(page, _parts(display, size))
    page.locator("#study-choice-C").click()
    page.wait_for_function("() => document.querySelector('#study-feedback')?.innerText.includes('saved')")
    assert "true middle" not in page.locator("#study-feedback").inner_text()   # blind survived the reload
    _no_leak(page, token)
    seen = page.evaluate("() => window.__bodies")
    assert any("process_completed" in b for b in seen), seen[:5]   # the scan saw the handlers' outputs
    page.close()


def test_a_wrong_or_missing_invitation_opens_nothing_and_changes_nothing(browser, study_url):
    url, data = study_url
    cfg = _config(data)
    before = sorted(p.name for p in (cfg.results / cfg.study_id).iterdir())
    page = _fresh(browser, url + "/?invite=not-a-real-token", (1440, 900))
    page.wait_for_function("() => document.querySelector('#study-progress')?.innerText.includes('does not open')")
    assert _progress(page).strip() == access.BAD_INVITE
    for hidden in ("#study-choice-A", "#study-frames img", "#study-begin", "#study-practice-A", "#study-prev"):
        assert not page.locator(hidden).first.is_visible(), hidden
    _no_error_shown(page)
    page.close()
    page = _fresh(browser, url, (390, 844))
    assert "invitation" in _progress(page)
    page.locator("#study-start").click()
    page.wait_for_function("() => document.querySelector('#study-progress')?.innerText.includes('personal invitation')")
    assert _progress(page).strip() == access.NO_INVITE
    assert not page.locator("#study-choice-A").is_visible()
    _no_error_shown(page)
    page.locator("#study-annotator input").fill("anon-frames-1440")      # someone's id is not their key
    page.locator("#study-start").click()
    page.wait_for_function("() => document.querySelector('#study-progress')?.innerText.includes('does not open')")
    assert not page.locator("#study-choice-A").is_visible()
    assert sorted(p.name for p in (cfg.results / cfg.study_id).iterdir()) == before
    told = " ".join(page.evaluate("() => window.__bodies"))
    assert "anon-frames-1440 ·" not in told and "answered" not in told   # nobody's session came back
    page.close()


def test_a_slow_media_load_is_not_counted_as_thinking(browser, study_url):
    url, data = study_url
    _set_display(data, "frames")
    annotator = "anon-slow"
    page = _fresh(browser, _link(url, data, annotator), (1440, 900))
    _through_intro(page, annotator)
    delay = 3.0

    def slow(route):
        time.sleep(delay)
        route.continue_()
    page.route(re.compile(r".*/gradio_api/file=.*\.media/.*\.jpg$"), slow)
    # the first question's image was asked for already: answer it, then time the second one
    _wait_question(page, annotator)
    page.locator("#study-choice-A").click()
    page.wait_for_function("() => document.querySelector('#study-feedback')?.innerText.includes('saved')")
    page.wait_for_function("() => { const i = document.querySelector('#study-frames img'); "
                           "return i && i.complete && i.naturalWidth > 0 && "
                           "(document.querySelector('#study-marks .study-marks')?.dataset.media || 'x')"
                           ".split(',').every(n => i.src.includes(n)); }", timeout=60_000)
    page.locator("#study-choice-A").click()
    page.wait_for_function("() => (document.querySelector('#study-progress')?.innerText || '').includes('answered 2/')")
    rec = _records(data, annotator)[1]
    assert rec["timing"] == "page" and rec["load_sec"] >= delay, rec
    assert rec["elapsed_sec"] <= rec["server_elapsed_sec"] - delay + 0.5, rec   # the load is not in it
    page.close()


def test_researcher_view_needs_the_token_and_a_wrong_one_says_so_in_one_line(browser, study_url):
    url, _ = study_url
    page = _fresh(browser, url, (1440, 900))
    assert not page.locator("#study-token").is_visible()
    page.goto(url + "/?researcher=1", wait_until="load")
    page.wait_for_selector("#study-token", state="visible")
    page.locator("#study-token input").fill("wrong")
    page.locator("#study-show").click()
    page.wait_for_function("() => document.querySelector('#study-summary')?.innerText.includes('Wrong or missing')")
    assert settled_text(page, "#study-summary").strip() == h.WRONG_TOKEN   # once the event's busy state is gone
    _no_error_shown(page)
    page.locator("#study-token input").fill(TOKEN)
    page.locator("#study-show").click()
    page.wait_for_function("() => document.querySelector('#study-summary')?.innerText.includes('Human (paper)')")
    page.wait_for_selector("#study-table", state="visible")
    page.wait_for_selector("#study-coverage", state="visible")
    page.locator("#study-token input").fill("wrong again")
    page.locator("#study-show").click()
    page.wait_for_function("() => document.querySelector('#study-summary')?.innerText.includes('Wrong or missing')")
    page.wait_for_selector("#study-table", state="hidden")
    page.wait_for_selector("#study-coverage", state="hidden")
    assert "Human (paper)" not in page.locator("body").inner_text()          # old results hidden
    _no_error_shown(page)
    page.close()


def test_the_clock_runs_in_the_page_and_an_answered_question_stays_locked(browser, study_url):
    url, data = study_url
    _set_display(data, "frames")
    annotator = "anon-clock"
    page = _fresh(browser, _link(url, data, annotator), (1440, 900))
    _through_intro(page, annotator)
    first = _wait_question(page, annotator)
    clock = page.locator("#study-progress .study-clock")
    idle(page)   # the question's events have answered
    before, calls = clock.inner_text(), len(page.urls)
    page.wait_for_function("(b) => document.querySelector('#study-progress .study-clock')?.innerText !== b",
                           arg=before)                      # it ticks ...
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


CLIP_NAMES = """() => [...document.querySelectorAll('#study-videos [data-testid=block-label]')].map(e => {
  const r = e.getBoundingClientRect(), cs = getComputedStyle(e);
  return {text: e.innerText.trim(), size: parseFloat(cs.fontSize), color: cs.color, background: cs.backgroundColor,
          height: r.height}; })"""


@pytest.mark.parametrize("size", [(1440, 900), (390, 844)])
def test_in_video_display_each_clip_is_named_on_a_chip_and_a_phone_shows_them_two_by_two(browser, study_url, size):
    url, data = study_url
    _set_display(data, "video")
    annotator = f"anon-chips-{size[0]}"
    page = _fresh(browser, _link(url, data, annotator), size)
    _through_intro(page, annotator)
    _wait_question(page, annotator)
    page.wait_for_selector("#study-cand-D video", state="visible")
    names = page.evaluate(CLIP_NAMES)
    assert [n["text"] for n in names] == ["BEGINNING", "END", "A", "B", "C", "D"], names
    for name in names:   # dark on white, 14 px and more: gradio's grey 13 px label without a background was lost
        assert name["size"] >= 14 and name["background"] == "rgb(255, 255, 255)", name
        assert name["color"] == "rgb(31, 37, 51)", name
    if size[0] < 600:
        settle(page, "#study-cand-D")   # the four videos' boxes where their layout has put them
        boxes = [page.locator(f"#study-cand-{x}").bounding_box() for x in "ABCD"]
        assert boxes[0]["y"] == pytest.approx(boxes[1]["y"], abs=2) and boxes[2]["y"] > boxes[0]["y"] + 20, boxes
        assert all(b["width"] >= 0.35 * size[0] for b in boxes), boxes      # half the screen each, not a quarter
    page.close()
