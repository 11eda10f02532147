"""The Impact tab in headless Chromium: the body on first open, a camera facing the hit, the
timeline's labels, the status line, bad frame input, deep links, copy link, shortcuts, a phone."""
from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from tests.browser.conftest import ROOT, idle, open_tab, snap

BACKGROUND = (247, 247, 250)  # the 3D view's clear colour, (0.97, 0.97, 0.98)


@pytest.fixture(scope="module")
def clips(example_data_dir) -> dict[str, dict]:
    items = json.loads((example_data_dir / "impact" / "annotations.json").read_text())["items"]
    return {item["qid"]: item for item in items}


def new_page(browser, url: str, width: int = 1440, height: int = 900):
    page = browser.new_page()
    page.set_viewport_size({"width": width, "height": height})
    page.console_errors = []
    page.on("pageerror", lambda exc: page.console_errors.append(str(exc)))
    page.set_default_timeout(90_000)
    page.goto(url, wait_until="load", timeout=120_000)
    page.wait_for_selector("#app-tabs", timeout=120_000)
    return page


def show_impact(page) -> None:
    """Open the tab (unless the page shows it) and wait until its view is drawn and every event of
    the page has answered. The view is drawn when the tab is first shown (impactReady marks it):
    a frame typed before it arrives would be replaced by it, and on a loaded machine it arrives
    seconds after the tab shows."""
    selected = page.locator("#app-tabs [role='tab'][aria-selected='true']").first
    if selected.inner_text().strip() != "Impact":
        open_tab(page, "Impact")
    page.wait_for_function("() => document.documentElement.dataset.impactReady === '1'", timeout=120_000)
    page.wait_for_selector("#impact-frame", state="visible")
    page.wait_for_function("() => (document.querySelector('#impact-timeline')?.innerText || '').includes('truth')",
                           timeout=120_000)
    idle(page)


def frame_box(page):
    return page.locator("#impact-frame input[type='number']").first


# the view has drawn the last painting it was given (body_view.py: data-want, data-key, data-draws)
DRAWN_JS = """() => { const c = document.querySelector('#impact-body3d canvas');
    return !!c && !!c.dataset.draws && !!c.dataset.want && c.dataset.key === c.dataset.want; }"""


def canvas_image(page):
    """The 3D view's canvas as a PIL image, once the body has been drawn on it with the last
    painting (and camera) the page gave it: the page-load view's painting can be drawn first."""
    from PIL import Image

    canvas = page.locator("#impact-body3d canvas").first
    canvas.wait_for(timeout=120_000)  # software WebGL on a loaded 2-core machine can take a minute
    canvas.scroll_into_view_if_needed()
    page.wait_for_function(DRAWN_JS, timeout=120_000)
    for _ in range(60):  # the mesh loads and the body is drawn after the canvas appears
        image = Image.open(io.BytesIO(canvas.screenshot())).convert("RGB")
        if body_pixels(image) > 0.02 * image.width * image.height:
            return image
        page.wait_for_timeout(1000)
    return image


def body_pixels(image) -> int:
    """Pixels that are not the view's background (anti-aliasing tolerance)."""
    return sum(n for n, c in image.getcolors(1 << 24) if max(abs(a - b) for a, b in zip(c, BACKGROUND)) > 24)


def painted_pixels(image) -> int:
    """Saturated pixels: the painted region stands out from the grey body and the background."""
    return sum(n for n, c in image.getcolors(1 << 24) if max(c) - min(c) > 80)


def drawn_until(page, wanted, seconds: float = 20.0) -> int:
    """The painted pixels of the frames the view draws, until one is `wanted` (or time is up):
    the camera moves over several frames after an input."""
    deadline = seconds * 1000
    while True:
        count = painted_pixels(canvas_image(page))
        if wanted(count) or deadline <= 0:
            return count
        page.wait_for_timeout(150)
        deadline -= 300   # a canvas screenshot takes about as long as the wait


def drag_until(page, wanted, tries: int = 5) -> int:
    """Drag across the body until the view has turned (`wanted`): the viewer takes pointer input
    only once its camera is attached, which on a loaded machine comes after the first frame is
    drawn, so a drag that came too early is repeated rather than waited for with a fixed sleep."""
    count = painted_pixels(canvas_image(page))
    for _ in range(tries):
        box = page.locator("#impact-body3d canvas").first.bounding_box()
        y = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + box["width"] * 0.15, y)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] * 0.85, y, steps=12)
        page.mouse.up()
        count = drawn_until(page, wanted, seconds=4.0)
        if wanted(count):
            return count
    return count


def test_the_body_shows_when_the_tab_is_first_opened_without_any_click_on_it(browser, app_url):
    page = new_page(browser, app_url)
    try:
        # The page shows window search: Impact draws its view (and the body) when first opened.
        assert not page.locator("#impact-body3d").is_visible()
        show_impact(page)
        image = canvas_image(page)
        assert body_pixels(image) > 0.02 * image.width * image.height, "the 3D view is blank"
        # --disable-gpu: WebGL runs on SwiftShader, where multisampling cost each painting ~150 ms
        renderer = page.evaluate("""() => { const gl = document.createElement('canvas').getContext('webgl');
            const info = gl.getExtension('WEBGL_debug_renderer_info');
            return info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER); }""")
        assert "swiftshader" in renderer.lower(), renderer
        assert page.locator("#impact-body3d canvas").get_attribute("data-antialias") == "0"
        assert not page.console_errors, page.console_errors
    finally:
        page.close()


def test_a_deep_link_opens_the_clip_and_frame_and_the_camera_faces_the_hit(browser, app_url, clips):
    frame = 46
    assert clips["h0007"]["frames"][str(frame)]["regions"] == ["butt"]
    page = new_page(browser, f"{app_url}?tab=impact&clip=h0007&frame={frame}")
    try:
        show_impact(page)
        assert page.locator("#impact-clip input").first.input_value().startswith("h0007")
        assert frame_box(page).input_value() == str(frame)
        page.wait_for_function("() => document.querySelector('#impact-regions')?.innerText.includes('[butt]')")
        behind = painted_pixels(canvas_image(page))
        assert behind > 400, f"the hit (buttocks) is not in view: {behind} painted pixels"
        facing = float(page.locator("#impact-body3d canvas").first.get_attribute("data-alpha"))
        # turn the body half way round by dragging, then the reset control faces the hit again
        turned = drag_until(page, lambda n: n < behind * 0.6)
        assert turned < behind * 0.6, (turned, behind)
        page.locator("#impact-reset-view").click()
        # the reset's camera has arrived and been drawn (the painting is the same one)
        page.wait_for_function("(a) => { const c = document.querySelector('#impact-body3d canvas');"
                               " return Math.abs(+c.dataset.alpha - a) < 1; }", arg=facing)
        reset = drawn_until(page, lambda n: n > behind * 0.8)
        assert reset > behind * 0.8, (reset, behind)
    finally:
        page.close()


def test_a_hand_hit_is_seen_from_its_side_and_the_arrow_keys_turn_the_body(browser, app_url, clips):
    """The view's camera follows painting.camera_for in the mesh's own axes: a right-hand hit is
    seen from the body's right (alpha 180), and half a turn away the hand is behind the body."""
    frame = 62
    assert clips["h0005"]["frames"][str(frame)]["regions"] == ["right hand"]
    page = new_page(browser, f"{app_url}?tab=impact&clip=h0005&frame={frame}")
    try:
        show_impact(page)
        page.wait_for_function("() => document.querySelector('#impact-regions')?.innerText.includes('[right hand]')")
        page.wait_for_function("() => { const c = document.querySelector('#impact-body3d canvas');"
                               " return !!c && !!c.dataset.draws && c.dataset.key === c.dataset.want; }")
        canvas = page.locator("#impact-body3d canvas").first
        assert abs(float(canvas.get_attribute("data-alpha")) - 180) < 25
        facing = painted_pixels(canvas_image(page))
        assert facing > 100, f"the hit (right hand) is not in view: {facing} painted pixels"
        canvas.focus()
        alpha = float(canvas.get_attribute("data-alpha"))
        for _ in range(12):   # 12 x 15 degrees: the other side
            page.keyboard.press("ArrowLeft")
        page.wait_for_function("(a) => Math.abs(+document.querySelector('#impact-body3d canvas').dataset.alpha - a)"
                               " < 1", arg=alpha + 180)
        behind = painted_pixels(canvas_image(page))
        assert behind < facing * 0.6, (behind, facing)
    finally:
        page.close()


def test_a_bad_deep_link_says_which_value_was_not_understood(browser, app_url, clips):
    page = new_page(browser, f"{app_url}?tab=impact&clip=p9999&frame=abc")
    try:
        show_impact(page)
        page.wait_for_function("() => (document.querySelector('#impact-message')?.innerText || '').includes('p9999')")
        status = " ".join(page.locator("#impact-message").inner_text().split())
        assert "The link's clip p9999 is not in this data; showing the first clip." in status, status
        assert "The link's frame abc is not a frame of" in status and "Traceback" not in status
        first = next(iter(clips))
        assert page.locator("#impact-clip input").first.input_value().startswith(first)
    finally:
        page.close()


def test_timeline_labels_never_overlap_and_the_status_clears_with_the_clip(page, clips):
    show_impact(page)
    page.locator("#impact-clip input").first.click()
    page.get_by_role("option", name="h0004").first.click()  # three moments close together
    page.wait_for_function("() => document.querySelector('#impact-timeline')?.innerText.includes('150-154')")
    page.locator("#impact-run-temporal").click()
    page.wait_for_function("() => (document.querySelector('#impact-status')?.innerText || '').includes('Temporal')")
    page.wait_for_function("() => document.querySelector('#impact-timeline')?.innerText.includes('#1 IoU')")
    boxes = page.evaluate("""() => [...document.querySelectorAll('#impact-timeline .impact-label')]
        .map(el => { const r = el.getBoundingClientRect(); return [el.innerText, r.left, r.right, r.top, r.bottom]; })""")
    assert len(boxes) >= 4, boxes
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            apart = a[2] <= b[1] + 0.5 or b[2] <= a[1] + 0.5 or a[4] <= b[3] + 0.5 or b[4] <= a[3] + 0.5
            assert apart, f"labels {a[0]!r} and {b[0]!r} overlap"
    ticks = page.locator("#impact-timeline .impact-tick-label").all_inner_texts()
    assert ticks[:3] == ["0 s", "2 s", "4 s"], ticks  # a time axis
    snap(page, "impact-timeline-lanes")
    page.locator("#impact-clip input").first.click()
    page.get_by_role("option", name="h0002").first.click()
    page.wait_for_function("() => document.querySelector('#impact-timeline')?.innerText.includes('83-86')")
    page.wait_for_function("() => !(document.querySelector('#impact-status')?.innerText || '').trim()")


def test_clearing_the_frame_box_keeps_the_view_and_says_what_to_type(page):
    """Said on the tab's message line as it is typed; the next good frame clears it."""
    show_impact(page)
    page.wait_for_function("() => document.querySelector('#impact-regions')?.innerText.includes('truth')")
    before = page.locator("#impact-regions").inner_text()
    box = frame_box(page)
    box.fill("")
    box.press("Enter")
    page.wait_for_function("() => (document.querySelector('#impact-message')?.innerText || '').includes('frame box is empty')")
    text = page.locator("body").inner_text()
    assert "Could not preprocess" not in text and "Original error" not in text
    assert page.locator("#impact-regions").inner_text() == before
    box.fill("9999")
    box.press("Enter")
    page.wait_for_function("() => (document.querySelector('#impact-message')?.innerText || '').includes('9999 is outside')")
    assert "Could not preprocess" not in page.locator("body").inner_text()
    box.fill("71")
    box.press("Enter")
    page.wait_for_function("() => !(document.querySelector('#impact-message')?.innerText || '').trim()")
    page.wait_for_function("() => (document.querySelector('#impact-timeline')?.innerHTML || '').includes('frame 71 =')")


def test_metric_headers_are_text_not_mailto_links(page):
    show_impact(page)
    page.locator("#impact-metrics").get_by_text("Metrics for the set").first.click()
    page.locator("#impact-run-metrics").click()
    page.wait_for_function("() => (document.querySelector('#impact-metrics-table')?.innerText || '').includes('Temporal')",
                           timeout=300_000)
    table = page.locator("#impact-metrics-table")
    assert table.locator("a[href^='mailto:']").count() == 0
    headers = table.locator("th").all_inner_texts()
    assert "mAP@0.3" in headers and "R1@0.3" in headers, headers


def test_copy_link_makes_the_link_that_reopens_this_view(browser, app_url, page):
    show_impact(page)
    box = frame_box(page)
    box.fill("130")
    box.press("Enter")
    page.wait_for_function("() => document.querySelector('#impact-timeline')?.innerText.includes('frame 130')")
    page.locator("#impact-copy-link").click()
    link = page.locator("#impact-link input, #impact-link textarea").first
    page.wait_for_function("() => { const el = document.querySelector('#impact-link input, #impact-link textarea');"
                           " return el && el.value.includes('?'); }")
    url = link.input_value()
    first = page.locator("#impact-clip input").first.input_value().split(" ")[0]
    assert url == f"{app_url.rstrip('/')}/?clip={first}&frame=130&tab=impact", url
    again = new_page(browser, url)
    try:
        show_impact(again)
        assert frame_box(again).input_value() == "130"
        assert again.locator("#impact-clip input").first.input_value().startswith(first)
    finally:
        again.close()


def test_presentation_keys_step_frames_and_play_the_clip(page):
    show_impact(page)
    box = frame_box(page)
    box.fill("60")
    box.press("Enter")
    page.wait_for_function("() => document.querySelector('#impact-timeline')?.innerText.includes('frame 60')")
    page.locator("#impact-intro").click()  # the focus leaves the text box
    page.keyboard.press(".")
    page.wait_for_function("() => document.querySelector('#impact-timeline')?.innerText.includes('frame 61')")
    assert box.input_value() == "61"
    page.keyboard.press(",")
    page.keyboard.press(",")
    page.wait_for_function("() => document.querySelector('#impact-timeline')?.innerText.includes('frame 59')")
    box.click()
    box.press(".")  # typing in the box is not a shortcut
    page.locator("#impact-intro").click()
    assert box.input_value() == "59"
    # frame 59's view (its timeline, and the video's position beside it) was the last frame event:
    # no later position can interrupt the playing once the video has finished seeking to it
    page.wait_for_function("() => { const v = document.querySelector('#impact-video video');"
                           " return !!v && !v.seeking && v.readyState >= 1 && v.currentTime > 0; }")
    assert page.evaluate("() => document.querySelector('#impact-video video').paused")
    page.keyboard.press(" ")
    page.wait_for_function("() => !document.querySelector('#impact-video video').paused")
    page.keyboard.press(" ")
    page.wait_for_function("() => document.querySelector('#impact-video video').paused")


def test_on_a_phone_the_tab_fits_and_its_frame_controls_can_be_tapped(browser, app_url):
    page = new_page(browser, app_url, 390, 844)
    try:
        show_impact(page)
        widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert widths[0] <= widths[1], f"horizontal overflow: {widths}"
        start = int(frame_box(page).input_value())
        step = page.locator("#impact-step-on")
        step.scroll_into_view_if_needed()
        box = step.bounding_box()
        assert box["height"] >= 40 and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
        step.click()
        page.wait_for_function("(n) => document.querySelector('#impact-timeline')?.innerText.includes('frame ' + n)",
                               arg=start + 1)
        for selector in ("#impact-clip", "#impact-run-temporal", "#impact-frame", "#impact-body3d"):
            right = page.locator(selector).first.bounding_box()
            assert right["x"] >= 0 and right["x"] + right["width"] <= 391, (selector, right)
    finally:
        page.close()


@pytest.mark.parametrize("width,height", [(1440, 900), (1920, 1080), (390, 844)])
def test_screenshots_of_the_tab(browser, app_url, width, height):
    """test-artifacts/impact-<w>x<h>.png; with UPDATE_DOCS_SCREENSHOTS=1 also docs/ (never by default)."""
    page = new_page(browser, f"{app_url}?tab=impact&clip=h0007&frame=46", width, height)
    try:
        show_impact(page)
        page.wait_for_function("() => document.querySelector('#impact-regions')?.innerText.includes('[butt]')")
        assert painted_pixels(canvas_image(page)) > 0
        page.locator("#tab-impact").scroll_into_view_if_needed()
        page.evaluate("() => window.scrollTo(0, 0)")
        name = f"impact-{width}x{height}"
        shot = snap(page, name)
        assert shot.stat().st_size > 10_000
        if os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":
            Path(ROOT / "docs" / f"{name}.png").write_bytes(shot.read_bytes())
    finally:
        page.close()
