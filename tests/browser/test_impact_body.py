"""Open an impact clip, scrub to an impact frame and see the body painted."""
from __future__ import annotations

import json

from tests.browser.conftest import idle, open_tab, snap


def test_scrubbing_to_an_impact_frame_paints_the_body(page, example_data_dir):
    annotations = json.loads((example_data_dir / "impact" / "annotations.json").read_text())
    item = annotations["items"][0]
    frame, info = next(iter(item["frames"].items()))
    open_tab(page, "Impact")
    number = page.locator("#impact-frame input[type='number']").first
    number.fill(str(frame))
    number.press("Enter")
    page.wait_for_function(
        "(label) => document.querySelector('#impact-regions')?.innerText.includes(label)",
        arg=info["regions"][0], timeout=90_000)
    canvas = page.locator("#impact-body3d canvas").first
    canvas.wait_for(timeout=120_000)  # software WebGL on a loaded 2-core machine can take a minute
    canvas.scroll_into_view_if_needed()
    page.wait_for_function("() => { const c = document.querySelector('#impact-body3d canvas');"
                           " return !!c && !!c.dataset.draws && c.dataset.key === c.dataset.want; }")
    shot = snap(page, "impact-painted-body")
    box = canvas.bounding_box()
    assert box and box["width"] > 100 and box["height"] > 100
    # The canvas shows more than one colour: the painted region stands out from the grey body.
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    scale_x = image.width / page.viewport_size["width"]
    # Skip the top band where the (coloured) label badge sits.
    crop = image.crop((int(box["x"]), int(box["y"] + 60), int(box["x"] + box["width"]),
                       int(box["y"] + box["height"])))
    colours = {c for _, c in crop.getcolors(maxcolors=1 << 20) or []}
    saturated = [c for c in colours if max(c) - min(c) > 80]
    assert saturated, "no painted (saturated) pixels on the body view"
    assert scale_x > 0


def test_the_body_view_appears_on_a_page_that_loads_the_body_mesh_slowly(browser, app_url):
    """A slow page (the body's mesh still downloading) that gets new paintings meanwhile, here
    from two runs of the spatial baseline, shows the last of them once the mesh arrives."""
    page = browser.new_page()
    held = []  # the mesh is held back until the body has been sent twice
    page.route("**/*-mesh.bin", lambda route: held.append(route))
    try:
        page.goto(app_url, wait_until="load", timeout=120_000)
        page.wait_for_selector("#app-tabs", timeout=120_000)
        open_tab(page, "Impact")
        page.wait_for_function("() => document.querySelector('#impact-regions')?.innerText"
                               ".includes('truth')", timeout=90_000)
        for run in range(2):
            page.locator("#impact-run-spatial").click()
            page.wait_for_function("(n) => (document.querySelector('#impact-status')?.innerText"
                                   " || '').includes('Spatial')", arg=run, timeout=90_000)
            idle(page)   # the run's answer has reached the viewer (the second one's too)
        assert held, "the body's mesh was never requested, so nothing was held back"
        assert page.locator("#impact-body3d canvas[data-draws]").count() == 0
        for route in held:
            route.continue_()
        page.wait_for_selector("#impact-body3d canvas[data-draws]", timeout=120_000)
        canvas = page.locator("#impact-body3d canvas").first
        assert canvas.get_attribute("data-key") == canvas.get_attribute("data-want")  # the last painting
    finally:
        page.close()


def test_a_body_mesh_that_failed_to_load_says_so_and_the_next_painting_loads_it_again(browser, app_url):
    page = browser.new_page()
    failed = []

    def once(route):
        if failed:
            route.continue_()
        else:
            failed.append(route.request.url)
            route.fulfill(status=503, body="busy")

    page.route("**/*-mesh.bin", once)
    try:
        page.goto(app_url + "?tab=impact", wait_until="load", timeout=120_000)
        page.wait_for_function("() => (document.querySelector('#impact-body3d .body3d-note')?.innerText || '')"
                               ".includes('could not be loaded')", timeout=120_000)
        assert failed and page.locator("#impact-body3d canvas[data-draws]").count() == 0
        page.locator("#impact-run-spatial").click()   # a new painting: the mesh is asked for again
        page.wait_for_function("() => { const c = document.querySelector('#impact-body3d canvas');"
                               " return !!c && !!c.dataset.draws && c.dataset.key === c.dataset.want; }",
                               timeout=120_000)
        assert page.locator("#impact-body3d .body3d-note").inner_text() == ""
    finally:
        page.close()
