"""Apply in the Model sidebar asks the backend at once (headless Chromium, 1440x900, a real
OpenAI-compatible server on 127.0.0.1 that lists its models and wants one key, and a closed port):
an unknown model, a refused key and no server each get one line just under Apply naming what
failed, before any question is run; a backend that answers says so."""
from __future__ import annotations

from tests.browser.conftest import TAB_READY, idle, open_model_panel
from tests.helpers.live_app import free_port
from tests.helpers.openai_server import ScriptedOpenAIServer

KEY = "sk-browser-key-789"
LINE = "(document.querySelector('#settings-message')?.innerText || '')"


def _apply(page, spec: str, url: str, key: str, expect: str) -> str:
    box = page.locator("#settings-backend input").first
    box.fill(spec)
    box.press("Enter")
    page.locator("#settings-base-url textarea, #settings-base-url input").first.fill(url)
    page.locator("#settings-api-key input, #settings-api-key textarea").first.fill(key)
    page.locator("#settings-apply").click()
    page.wait_for_function(f"(s) => {LINE}.includes(s)", arg=expect, timeout=30_000)
    idle(page)   # the event's last word: its busy timer ("0.2s") off the line
    line, apply = (page.locator(s).bounding_box() for s in ("#settings-message", "#settings-apply"))
    below = line["y"] - (apply["y"] + apply["height"])
    assert -1 <= below <= 40, ("the line is not just under Apply", line, apply)
    text = page.evaluate(f"() => {LINE}").strip()
    assert "\n" not in text and KEY not in text and "sk-wrong" not in text, text
    return text


def test_apply_says_at_once_what_failed_under_the_button(sized_page, app_url):
    page = sized_page(app_url, (1440, 900), TAB_READY["window-search"])
    open_model_panel(page)
    with ScriptedOpenAIServer(["never sent"], models=("model-a", "model-b"), api_key=KEY) as server:
        text = _apply(page, "openai:nope", server.url, KEY, "no model")
        assert "`nope`" in page.locator("#settings-message").inner_html() or "nope" in text
        assert "model-a" in text and server.url in text, text
        text = _apply(page, "openai:model-a", server.url, "sk-wrong-key", "refused the API key")
        assert "401" in text, text
        closed = f"http://127.0.0.1:{free_port()}/v1"
        text = _apply(page, "openai:model-a", closed, "", "no server answers")
        assert closed in text and "connection refused" in text, text
        text = _apply(page, "openai:model-a", server.url, KEY, "is served")
        assert text.startswith("✓") and "model-a" in text, text
        assert server.requests == []            # nothing was asked a question to find out
    assert "openai:model-a" in page.locator("#backend-badge").inner_text()
