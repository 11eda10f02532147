"""Region vocabulary, the free-text parser, the paper's prompt and the model/baseline solvers."""
from __future__ import annotations

import re

import pytest

from components.impact.prompts.regions import ANSWER_FORMAT, PROMPT_FILE, region_prompt
from components.impact.regions import GROUPS, REGION_LABELS
from tests.helpers.regions import parse_region_labels
from components.impact.solvers import BASELINE_NAME, BaselineRegionSolver, ModelRegionSolver, baseline_answer, \
    baseline_regions, solvers_for
from tests.helpers.prompt_pins import assert_pinned

BODY_MD_LABELS = ("head, neck, chest, back, left upper arm, left forearm, left hand, right upper arm, "
                  "right forearm, right hand, butt, hip, left thigh, left calf, left foot, right thigh, "
                  "right calf, right foot")


def _words(text: str) -> str:
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
    return re.sub(r"\s+", "", text)


def test_eighteen_labels_in_the_papers_order():
    assert list(REGION_LABELS) == BODY_MD_LABELS.split(", ")
    assert len(REGION_LABELS) == 18


def test_seven_groups_partition_the_labels():
    assert set(GROUPS) == {"head", "torso", "arms", "hands", "hips", "legs", "feet"}
    members = [label for labels in GROUPS.values() for label in labels]
    assert sorted(members) == sorted(REGION_LABELS)
    assert set(GROUPS["head"]) == {"head", "neck"} and set(GROUPS["hips"]) == {"butt", "hip"}
    assert set(GROUPS["legs"]) == {"left thigh", "left calf", "right thigh", "right calf"}


# HAPACT A.6.3 as extracted from the PDF (typographic quotes kept); docs/prompts.md pins the file
PAPER_PROMPT = (
    "You are observing a movie frame. The impact query is \u201c{query}\u201d. Select all body regions "
    "physically affected by the impact in this frame. "
    "The possible body regions are: head, neck, chest, back, left upper arm, left forearm, left hand, "
    "right upper arm, right forearm, right hand, butt, hip, left thigh, left calf, left foot, "
    "right thigh, right calf, right foot. "
    "Answer with only the selected body-region labels, separated by commas.")
# A.6.3's "Answer Format" table, as printed
PAPER_ANSWER_FORMAT = "The affected body regions are {list of body-region labels}."


def test_prompt_file_matches_the_paper_word_for_word():
    assert_pinned(PROMPT_FILE.name)
    assert _words(PAPER_PROMPT) == _words(PROMPT_FILE.read_text(encoding="utf-8"))
    assert "\u201c" not in PROMPT_FILE.read_text(encoding="utf-8")  # straight quotes restored
    assert ANSWER_FORMAT == PAPER_ANSWER_FORMAT


def test_prompt_fills_the_query_and_lists_every_label():
    text = region_prompt("A man is struck behind the knees by a staff.")
    assert 'The impact query is "A man is struck behind the knees by a staff."' in text
    assert BODY_MD_LABELS in text
    assert "{query}" not in text
    assert "{x}" in region_prompt("odd {x} braces")


PARSER_CASES = [
    ("head", ["head"], []),
    ("head, neck", ["head", "neck"], []),
    ("The affected body regions are left calf, right calf.", ["left calf", "right calf"], []),
    ("The affected body regions are head.", ["head"], []),
    ("rigth calf", ["right calf"], []),
    ("lfet hand", ["left hand"], []),
    ("left forarm", ["left forearm"], []),
    ("nek", ["neck"], []),
    ("knee", ["left calf", "right calf"], []),
    ("left knee", ["left calf"], []),
    ("both calves", ["left calf", "right calf"], []),
    ("both knees", ["left calf", "right calf"], []),
    ("legs", ["left thigh", "right thigh", "left calf", "right calf"], []),
    ("right leg", ["right thigh", "right calf"], []),
    ("left arm", ["left upper arm", "left forearm"], []),
    ("left and right calves", ["left calf", "right calf"], []),
    ("right and left hands", ["right hand", "left hand"], []),
    ("left calf and thigh", ["left calf", "left thigh"], []),
    ("face", ["head"], []),
    ("skull; jaw", ["head"], []),
    ("stomach", ["chest"], []),
    ("belly and ribs", ["chest"], []),
    ("shin", ["left calf", "right calf"], []),
    ("buttocks", ["butt"], []),
    ("back of the head", ["head"], []),
    ("the back of his neck", ["neck"], []),
    ("lower back", ["back"], []),
    ("torso", ["chest", "back"], []),
    ("right shoulder", ["right upper arm"], []),
    ("left wrist", ["left hand"], []),
    ("groin", ["hip"], []),
    ("LEFT FOOT", ["left foot"], []),
    ("left-upper-arm", ["left upper arm"], []),
    ("- chest\n- back", ["chest", "back"], []),
    ("right forearm, right forearm", ["right forearm"], []),
    ("head, banana", ["head"], ["banana"]),
    ("I cannot tell", [], ["i cannot tell"]),
    ("left", [], ["left"]),
    ("None", [], []),
    ("none.", [], []),
    ("The affected body regions are none.", [], []),
    ("", [], []),
    ("\u201cchest\u201d, \u201cback\u201d", ["chest", "back"], []),
]


@pytest.mark.parametrize("text,labels,unmapped", PARSER_CASES)
def test_parser(text, labels, unmapped):
    assert parse_region_labels(text) == (labels, unmapped)


def test_every_label_parses_to_itself():
    for label in REGION_LABELS:
        assert parse_region_labels(label) == ([label], [])
    # issue 13: the prompt's own list, in the prompt's order, is an echo (unparsed), not 18 labels;
    # all 18 in another order is an answer
    assert parse_region_labels(", ".join(REGION_LABELS)) == ([], [])
    backwards = list(reversed(REGION_LABELS))
    assert parse_region_labels(", ".join(backwards)) == (backwards, [])


def test_unrelated_words_are_not_fuzzy_matched():
    for word in ("harm", "deck", "table", "cheese", "leftovers"):
        labels, unmapped = parse_region_labels(word)
        assert labels == [] and unmapped == [word], word


BASELINE_CASES = [
    ("A man is struck behind the knees by a staff.", ["left calf", "right calf"]),
    ("A man is struck in the head by a ball.", ["head"]),
    ("A woman is punched in the stomach.", ["chest"]),
    ("A man is hit in the back of the head.", ["head"]),
    ("A man is kicked in the back.", ["back"]),
    ("He is shot in his left arm.", ["left upper arm", "left forearm"]),
    ("A ball smashes into a man's right hand.", ["right hand"]),
    ("A man is knocked in the buttocks and then in the face.", ["butt", "head"]),
]


@pytest.mark.parametrize("query,labels", BASELINE_CASES)
def test_baseline_reads_body_words(query, labels):
    assert baseline_regions(query) == labels


def test_baseline_without_a_body_word_selects_nothing_and_says_why():
    answer = baseline_answer("A man is knocked over by an explosion.")
    assert answer.labels == [] and answer.ok
    assert "names no body part" in answer.note
    assert answer.source == BASELINE_NAME and "text-only" in BASELINE_NAME


def test_baseline_backend_gets_the_text_only_solver():
    from backends.registry import resolve

    solver = solvers_for(resolve("baseline")).regions
    assert isinstance(solver, BaselineRegionSolver)
    answer = solver.select(None, "A man is struck behind the knees by a staff.")
    assert answer.labels == ["left calf", "right calf"]
    assert "knees" in answer.note


def _openai(server):
    from backends.config import ApiSettings
    from backends.registry import resolve

    return resolve("openai:test-model", api=ApiSettings(base_url=server.url, api_key="sk-test",
                                                        max_retries=0, timeout_s=10))


def test_model_solver_sends_the_prompt_and_the_frame_and_parses():
    from PIL import Image

    from tests.helpers.openai_server import ScriptedOpenAIServer

    with ScriptedOpenAIServer(["The affected body regions are left calf, rigth calf."]) as server:
        solver = solvers_for(_openai(server)).regions
        assert isinstance(solver, ModelRegionSolver)
        answer = solver.select(Image.new("RGB", (32, 24), "red"), "A man is struck behind the knees.")
    assert answer.ok and answer.attempts == 1
    assert answer.labels == ["left calf", "right calf"]
    content = server.requests[0]["messages"][0]["content"]
    texts = [part["text"] for part in content if part.get("type") == "text"]
    assert any('The impact query is "A man is struck behind the knees."' in t for t in texts)
    assert any(part.get("type") == "image_url" for part in content)


def test_model_solver_retries_unparsed_then_keeps_raw():
    from tests.helpers.openai_server import ScriptedOpenAIServer

    with ScriptedOpenAIServer(["I am not sure.", "hmm", "still no idea"]) as server:
        answer = ModelRegionSolver(_openai(server), max_attempts=3).select(None, "q")
    assert len(server.requests) == 3
    assert answer.labels == [] and not answer.ok and answer.error.startswith("unparsed")
    assert answer.raw == "still no idea" and answer.attempts == 3


def test_model_solver_second_attempt_succeeds_and_none_is_an_answer():
    from tests.helpers.openai_server import ScriptedOpenAIServer

    with ScriptedOpenAIServer(["???", "head"]) as server:
        answer = ModelRegionSolver(_openai(server)).select(None, "q")
    assert answer.labels == ["head"] and answer.attempts == 2 and answer.ok
    with ScriptedOpenAIServer(["None"]) as server:
        answer = ModelRegionSolver(_openai(server)).select(None, "q")
    assert answer.ok and answer.labels == [] and len(server.requests) == 1


def test_model_solver_reports_backend_failure():
    from tests.helpers.openai_server import ScriptedOpenAIServer

    with ScriptedOpenAIServer([{"status": 500, "body": "boom"}]) as server:
        answer = ModelRegionSolver(_openai(server)).select(None, "q")
    assert not answer.ok and answer.error.startswith("backend error") and answer.labels == []
