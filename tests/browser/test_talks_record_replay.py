"""Preparing a talk in the browser: record a model call, download the trace, replay it offline from
the Model panel's list, a file that is not a trace refused at Apply, the baseline records nothing."""
from __future__ import annotations

import json
import re

from tests.browser.conftest import idle, open_model_panel, open_tab, snap
from tests.helpers.openai_server import ScriptedOpenAIServer

ANSWER = json.dumps({"answer": "C", "reason": "the motion continues"})


def _open_panel(page) -> None:
    open_model_panel(page)


def _type_backend(page, spec: str) -> None:
    box = page.locator("#settings-backend input").first
    box.fill(spec)
    box.press("Enter")


def _set_record(page, on: bool) -> None:
    box = page.locator("#settings-record input[type='checkbox']").first
    if box.is_checked() != on:
        box.click()


def _apply_and_wait(page, badge_part: str) -> None:
    page.locator("#settings-apply").click()
    page.wait_for_function("(s) => document.querySelector('#backend-badge')?.innerText.includes(s)",
                           arg=badge_part, timeout=60_000)


def _note_with(page, text: str) -> str:
    page.wait_for_function("(s) => (document.querySelector('#settings-record-note')?.innerText"
                           " || '').includes(s)", arg=text, timeout=60_000)
    return page.locator("#settings-record-note").inner_text()


def _run_cloze_question(page) -> tuple[str, str]:
    open_tab(page, "Cloze")
    page.locator("#cloze-mode").get_by_text("Model", exact=True).click()
    parsed = page.locator("#cloze-parsed textarea, #cloze-parsed input").first
    assert parsed.input_value() == ""  # a page that has not run the question yet
    page.locator("#cloze-run-one").click()
    page.wait_for_function(
        "() => /^[A-D]$/.test((document.querySelector('#cloze-parsed textarea, #cloze-parsed input')"
        "?.value || '').trim())", timeout=120_000)
    raw = page.locator("#cloze-raw textarea, #cloze-raw input").first.input_value()
    return parsed.input_value().strip(), raw


def _pick_replay(page, name_part: str) -> None:
    page.locator("#settings-refresh").click()
    box = page.locator("#settings-replay input").first
    idle(page)  # the refreshed list has arrived
    box.click()
    page.get_by_role("option", name=re.compile(re.escape(name_part))).first.click()
    page.wait_for_function(
        "(s) => (document.querySelector('#settings-backend input')?.value || '').includes(s)",
        arg=f"replay:{name_part}", timeout=30_000)


def _fresh_page(browser, app_url):
    page = browser.new_page()
    page.set_default_timeout(60_000)
    page.goto(app_url, wait_until="load", timeout=120_000)
    page.wait_for_selector("#app-tabs", timeout=120_000)
    return page


def test_record_download_and_replay_a_talk(page, browser, app_url, tmp_path, monkeypatch):
    folder = tmp_path / "traces"
    monkeypatch.setenv("APP_TRACE_DIR", str(folder))  # the in-process app reads it per call
    with ScriptedOpenAIServer([ANSWER]) as server:
        _open_panel(page)
        _type_backend(page, "openai:scripted-vlm")
        page.locator("#settings-base-url textarea, #settings-base-url input").first.fill(server.url)
        _set_record(page, True)
        _apply_and_wait(page, "recording")
        note = _note_with(page, "Recording")
        assert "Recording" in note and "session-" in note and str(folder) in note
        assert "0 call(s)" in note

        letter, raw = _run_cloze_question(page)
        assert (letter, raw) == ("C", ANSWER) and len(server.requests) == 1

        # the panel follows the recorded call by itself and offers the trace
        _note_with(page, "1 call(s)")
        download = page.locator("#settings-trace-download")
        download.wait_for(state="visible", timeout=60_000)
        snap(page, "talks-recording")
        recorded = next(folder.glob("session-*.jsonl"))
        with page.expect_download() as info:
            download.click()
        assert info.value.suggested_filename == recorded.name
        assert open(info.value.path(), "rb").read() == recorded.read_bytes()

        # on stage, in a new page: the trace from the list, no server asked
        page = _fresh_page(browser, app_url)
        try:
            _replay_and_refuse(page, recorded, folder)
        finally:
            page.close()
        assert len(server.requests) == 1  # answered from the trace


def _replay_and_refuse(page, recorded, folder) -> None:
    _open_panel(page)
    _pick_replay(page, recorded.name)
    _apply_and_wait(page, f"replay:{recorded.name}")
    assert _run_cloze_question(page) == ("C", ANSWER)
    snap(page, "talks-replay")

    # a file in the folder that is not a trace is refused when applied, naming it
    (folder / "hello.jsonl").write_text('{"hello": 1}\n', encoding="utf-8")
    _open_panel(page)
    _pick_replay(page, "hello.jsonl")
    page.locator("#settings-apply").click()
    page.get_by_text("'hello.jsonl', line 1, is not a trace record").first.wait_for(timeout=30_000)
    assert f"replay:{recorded.name}" in page.locator("#backend-badge").inner_text()  # unchanged
    assert str(folder) not in page.locator("body").inner_text()

    # the baseline asks no model: nothing to record
    _type_backend(page, "baseline")
    _set_record(page, True)
    _apply_and_wait(page, "Model: baseline")
    _note_with(page, "Nothing to record")
    assert not page.locator("#settings-trace-download").is_visible()
