"""Every action longer than a second says how it goes where the visitor looks (headless Chromium,
1440x900): Render turntable counts the frames drawn on its own button, and Stop reads "Stopping…"
from the click until the run it stops has ended (a real OpenAI-compatible server on 127.0.0.1
that answers each question after a second)."""
from __future__ import annotations

import json
import re

from tests.browser.conftest import TAB_READY, open_model_panel
from tests.helpers.openai_server import ScriptedOpenAIServer

LAPTOP = (1440, 900)
LABEL = "(document.querySelector('#impact-render-turntable')?.innerText || '').trim()"
STOP = "(document.querySelector('#cloze-stop')?.innerText || '').trim()"


def test_render_turntable_counts_the_frames_drawn_on_its_button(sized_page, app_url):
    from components.impact.render import TURNTABLE_FRAMES, render_dir

    for old in render_dir().glob("*-turntable.mp4"):     # drawn by an earlier test: drawn again here
        old.unlink()
    page = sized_page(f"{app_url}?tab=impact&clip=h0007&frame=46", LAPTOP, TAB_READY["impact"])
    labels: list[str] = []
    page.expose_function("seen", lambda text: labels.append(text))
    page.evaluate(f"""() => {{ const b = document.querySelector('#impact-render-turntable');
        new MutationObserver(() => window.seen({LABEL})).observe(b, {{subtree: true, childList: true,
        characterData: true}}); }}""")
    page.locator("#impact-render-turntable").click()
    page.wait_for_function("() => !!document.querySelector('#impact-turntable video')", timeout=120_000)
    page.wait_for_function(f"() => {LABEL} === 'Render turntable'")
    counts = [int(m.group(1)) for text in labels if (m := re.match(rf"Rendering: (\d+) of {TURNTABLE_FRAMES} frames",
                                                                     text))]
    assert counts, f"the button never counted the frames: {labels}"
    assert counts == sorted(counts) and counts[-1] <= TURNTABLE_FRAMES, labels
    box = page.locator("#impact-render-turntable").bounding_box()
    assert 0 <= box["y"] and box["y"] + box["height"] <= LAPTOP[1], box   # on the first screen, where it was pressed
    assert page.locator("#impact-render-turntable").is_enabled()


def test_stop_says_stopping_until_the_run_has_stopped(sized_page, app_url):
    answer = json.dumps({"answer": "B", "reason": "slow"})
    with ScriptedOpenAIServer([{"content": answer, "delay": 1.0}]) as server:
        page = sized_page(f"{app_url}?tab=cloze&mode=model", LAPTOP, TAB_READY["cloze"])
        open_model_panel(page)
        box = page.locator("#settings-backend input").first
        box.fill("openai:test-model")
        box.press("Enter")
        page.locator("#settings-base-url textarea, #settings-base-url input").first.fill(server.url)
        page.locator("#settings-apply").click()
        page.wait_for_function("() => (document.querySelector('#backend-badge')?.innerText || '').includes('test-model')")
        page.locator("#app-sidebar .toggle-button").first.click()
        page.wait_for_function("() => !document.querySelector('#app-sidebar')?.classList.contains('open')")
        page.locator("#cloze-run-set").click()
        while len(server.requests) < 2:           # the run is under way: answers come every second
            page.wait_for_timeout(100)
        page.locator("#cloze-stop").click()
        page.wait_for_function(f"() => {STOP} === 'Stopping…'")
        page.wait_for_function(f"() => {STOP} === 'Stop'", timeout=120_000)
        asked = len(server.requests)
        page.wait_for_function("() => (document.querySelector('#cloze-model-summary')?.innerText || '')"
                               ".includes('stopped')", timeout=60_000)
        assert len(server.requests) == asked, "the run went on asking after Stop said it had stopped"
        assert asked < 18, asked
