"""The whole app loads in headless Chromium with three tabs and no JavaScript errors."""
from __future__ import annotations

from tests.browser.conftest import open_tab, snap


def test_three_tabs_load_without_console_errors(page):
    for label in ("Window search", "Cloze", "Impact"):
        open_tab(page, label)
        snap(page, f"tab-{label.lower().replace(' ', '-')}")
    assert page.locator("#backend-badge").inner_text().startswith("Model: baseline")
    # Gradio may log failed fetches of optional resources offline, and the 3D viewer (Babylon.js)
    # logs that WebGPU is missing in headless Chromium before it falls back to WebGL (the Impact
    # tests check the body is drawn); real script errors fail the test.
    errors = [e for e in page.console_errors if "Failed to load resource" not in e
              and not ("BJS - " in e and "WebGPU" in e)]
    assert errors == [], errors
