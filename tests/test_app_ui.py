"""The whole app, launched in-process and driven with gradio_client as a remote user would."""
from __future__ import annotations

import json
import urllib.request

import pytest

from tests.helpers.live_app import running_app
from tests.helpers.openai_server import ScriptedOpenAIServer

pytestmark = pytest.mark.slow  # a live app (tests/test_slow_marks.py)


@pytest.fixture(scope="module")
def app_url(example_data_dir, tmp_path_factory):
    with pytest.MonkeyPatch.context() as env:  # undone when the module's app stops
        env.setenv("APP_HUMAN_STUDY_DIR", str(tmp_path_factory.mktemp("human")))
        env.setenv("APP_CLOZE_RUNS_DIR", str(tmp_path_factory.mktemp("runs")))
        with running_app(example_data_dir) as url:
            yield url


def _config(url: str) -> dict:
    with urllib.request.urlopen(url.rstrip("/") + "/config", timeout=30) as resp:
        return json.loads(resp.read())


def _component(config: dict, elem_id: str) -> dict:
    for comp in config["components"]:
        if comp.get("props", {}).get("elem_id") == elem_id:
            return comp["props"]
    raise AssertionError(f"no component with elem_id {elem_id!r}")


def _choice_values(props: dict) -> list[str]:
    return [c[1] if isinstance(c, (list, tuple)) else c for c in props.get("choices", [])]


def test_three_tabs_exist_and_each_shows_its_example_data(app_url, example_data_dir):
    config = _config(app_url)
    labels = {c["props"].get("label") for c in config["components"] if c.get("type") in ("tab", "tabitem")}
    assert {"Window search", "Cloze", "Impact"} <= labels
    # Window search: the example annotation's queries are offered.
    annotations = json.loads((example_data_dir / "grounding" / "annotations.json").read_text())
    first_qid = annotations["pairs"][0]["target"]["qid"]
    # the query list is filled when the movie is (on page load): ask the tab for the movie's view
    from gradio_client import Client

    picked = Client(app_url, verbose=False).predict("m01", 180, api_name="/pick_movie")
    assert first_qid in str(picked)
    # Cloze: the data folder points at the example instances.
    assert _component(config, "cloze-root")["value"].endswith("cloze")
    # Impact: the example clips are offered when the tab is first opened (its select event), and
    # only then: a second opening leaves the visitor's view as it is
    impact = json.loads((example_data_dir / "impact" / "annotations.json").read_text())
    first_clip = impact["items"][0]["qid"]
    visitor = Client(app_url, verbose=False)
    opened = visitor.predict(api_name="/on_load_impact")
    assert any(first_clip in str(v) for v in _choice_values(opened[0]))
    assert not _choice_values(visitor.predict(api_name="/on_load_impact")[0])


def test_no_tab_draws_its_view_on_the_page_load(app_url):
    """A page draws only the tab it shows, from the select event gradio sends that tab as the
    page mounts: no load event fills a tab's components (each was a request on every page)."""
    config = _config(app_url)
    in_tab: set[int] = set()

    def walk(node: dict, inside: bool) -> None:
        here = inside or any(c["id"] == node["id"] and c.get("type") == "tabitem" for c in config["components"])
        if here:
            in_tab.add(node["id"])
        for child in node.get("children", []):
            walk(child, here)

    walk(config["layout"], False)
    on_load = [d for d in config["dependencies"] if any(t[1] == "load" for t in d["targets"]) and d.get("backend_fn")]
    drawing = [d.get("api_name") for d in on_load if len(set(d["outputs"]) & in_tab) > 2]
    # Cloze's runs link (sort=, overview=1, find=) too is a view on the tab's select since
    # 2026-12-05 (TabEvents.on_open, view="runs-link")
    assert drawing == [], drawing


def test_backend_choice_applies_to_its_own_session_only(app_url, example_data_dir):
    from gradio_client import Client

    answer = json.dumps({"answer": "B", "reason": "continuous motion"})
    cloze_args = (str(example_data_dir / "cloze"), "all", "S", 42, "edge1", False, "api", "frames")
    with ScriptedOpenAIServer([answer]) as server:
        api_user = Client(app_url, verbose=False)
        baseline_user = Client(app_url, verbose=False)
        badge, message = api_user.predict("openai:test-model", server.url, "sk-session-only-42", 16, False,
                                          api_name="/set_backend")
        assert "✓ openai:test-model is served" in message and "sk-session-only-42" not in message   # asked at once
        assert "openai:test-model" in badge and "sk-session-only-42" not in badge
        raw, letter = api_user.predict(*cloze_args, api_name="/on_run_one")[14:16]   # after 12 clips, 2 lines
        assert letter == "B" and raw == answer
        assert len(server.requests) == 1
        headers = {k.lower(): v for k, v in server.headers_seen[0].items()}
        assert headers["authorization"] == "Bearer sk-session-only-42"
        # The other session still answers with the offline edge baseline: no request reaches the API.
        raw2, letter2 = baseline_user.predict(*cloze_args, api_name="/on_run_one")[14:16]
        assert letter2 in ("A", "B", "C", "D")
        assert raw2.startswith("Edge-") and raw2 != answer
        assert len(server.requests) == 1


def test_an_unknown_backend_is_a_readable_line_on_the_model_panel_not_a_crash(app_url):
    from gradio_client import Client

    client = Client(app_url, verbose=False)
    badge, message = client.predict("opneai:gpt", "", "", 16, False, api_name="/set_backend")
    assert message.startswith("⚠") and "Did you mean 'openai'" in message
    assert "opneai" not in str(badge)   # the badge is left as it was: the refused spec changed nothing


def test_the_page_tracks_the_busy_state_of_a_handful_of_components_not_of_every_output(app_url):
    # the browser hands every event's state change to each component ever named here: with all
    # the outputs named that cost each click 0.15-0.3 s on this page (components/common/progress.py)
    config = _config(app_url)
    named = [dep["show_progress_on"] for dep in config["dependencies"] if dep.get("backend_fn")]
    assert all(targets is not None and len(targets) <= 1 for targets in named)
    targets = {i for group in named for i in group}
    outputs = {i for dep in config["dependencies"] if dep.get("backend_fn") for i in dep["outputs"]}
    # one per panel that runs something (each tab's message line, a run's view, the Model panel)
    assert len(targets) <= 16 and len(targets) * 5 <= len(outputs), (len(targets), len(outputs))
    by_id = {comp["id"]: comp.get("props", {}).get("elem_id") for comp in config["components"]}
    assert {"ws-message", "cloze-message", "impact-message"} <= {by_id[i] for i in targets}


def test_the_explorers_uploads_are_bounded(app_url):
    # the explorer takes uploads (videos, run files): bounded by APP_MAX_UPLOAD, default 2 GB
    # (the study page takes none: tests/cloze/test_study_access.py probes it as a stranger)
    assert _config(app_url)["max_file_size"] == 2 * 1024 ** 3
