"""The prompt files are Appendix G as checked (pinned in docs/prompts.md), and the messages are
built from them."""
from __future__ import annotations

import re

import pytest
from PIL import Image

from components.window_search import prompts
from components.window_search.types import Chunk, Statement
from tests.helpers.prompt_pins import assert_pinned


@pytest.mark.parametrize("name", prompts.PROMPT_FILES)
def test_prompt_files_are_the_text_checked_against_the_paper(name):
    assert_pinned(f"{name}.txt")


def test_prompt_files_use_straight_quotes_and_normal_spacing():
    for name in prompts.PROMPT_FILES:
        text = prompts.load_prompt(name)
        assert not re.search("[\u201c\u201d\u2018\u2019]", text), name
        # a space follows sentence punctuation (PDF extraction had dropped them)
        prose = re.sub(r"\{[A-Za-z_]+(?:\+1)?(?::[^{}]*)?\}", "", text)
        for allowed in ("e.g.", "i.e.", "C1:r", "REF:"):
            prose = prose.replace(allowed, "")
        assert not re.search(r"[a-z][.,;:][A-Za-z\"]", prose), name


def test_fill_handles_the_paper_template_syntax():
    assert prompts.fill(prompts.load_prompt("aws_decompose_cast_ref"), cid="C2", j=0) == "[C2:r1]"
    assert prompts.fill(prompts.load_prompt("aws_inspect_subtitle_line"), timestamp=12.345,
                        text="Hi") == "[t=12.3s] Hi"
    line = prompts.fill(prompts.load_prompt("aws_select_candidate"), index=0, chunk_id=4,
                        win_start=719.6, win_end=930.2, confidence=0.8149, reasoning="r")
    assert line == ("[0] chunk 4: examined window [720s, 930s], verdict=REJECT, confidence=0.81\n"
                    "verifier reasoning: r")
    assert "confidence=n/a" in prompts.fill(prompts.load_prompt("aws_select_candidate"), index=0,
                                            chunk_id=4, win_start=0, win_end=1, confidence=None,
                                            reasoning="")
    with pytest.raises(KeyError):
        prompts.fill("{query}")


def test_system_prompts_keep_their_json_braces_literal():
    system = prompts.load_prompt("aws_inspect_system")
    assert '"expand_seconds": <seconds or null>' in system
    assert prompts.with_budget(system) == system  # default budget: the printed text untouched


def test_with_budget_rewrites_only_the_budget_numbers():
    system = prompts.with_budget(prompts.load_prompt("aws_inspect_system"), M=2, delta_max=15)
    assert "AT MOST 2 times" in system and "AT MOST 15 seconds" in system
    assert "truncated to 15 s" in system and '"expand_seconds" (<=15)' in system
    assert "30" not in system and "3 times" not in system


def test_subtitle_block_and_decomposition_json():
    from components.media import Cue
    assert prompts.subtitle_block([]) == ""
    block = prompts.subtitle_block([Cue(5.0, 6.0, "Hello"), Cue(7.25, 8.0, "there")])
    assert block == ("Subtitles spoken in this window (absolute timestamps):\n"
                     "[t=5.0s] Hello\n[t=7.2s] there\n")
    js = prompts.decomposition_json([Statement("s1", "Kaffee is shouting")])
    assert '"id": "s1"' in js and '"text": "Kaffee is shouting"' in js and "image" not in js


def test_inspect_user_template_layout():
    from components.media import Cue, Frame
    from components.window_search.solvers import InspectContext, Observation, RefImage
    img = Image.new("RGB", (4, 4))
    ctx = InspectContext(query="Q", statements=[Statement("s1", "A")], cast=[],
                         ref_images=[RefImage("Lloyd", img)], chunk=Chunk(3, 540, 720), rank=1,
                         duration=7000.0)
    ctx.observations.append(Observation("initial", (540.0, 720.0), (540.0, 720.0),
                                        frames=[Frame(img, 540.0, 0), Frame(img, 541.0, 1)],
                                        cues=[Cue(541.0, 543.0, "Hi")]))
    msgs = prompts.inspect_messages(ctx, allow_expand=True)
    user = msgs[1].content
    assert user[0] == "[REF:Lloyd]" and user[1] is img
    assert user[2].startswith('Query: "Q"\nStatements the target moment must all satisfy:\n[')
    assert ("Candidate segment: chunk 3, movie time 540.0 s to 720.0 s (starts at 540.0 seconds)\n"
            "Subtitles spoken in this window (absolute timestamps):\n[t=541.0s] Hi\n"
            "The following is that segment as a video sampled at 1 fps") in user[2]
    assert user[2].endswith("Decide EMIT/EXPAND/REJECT.\n<540.0 seconds>")
    assert user[3] is img and user[4] == "<541.0 seconds>" and user[5] is img
    assert user[6].startswith("[Budget] Expansion 1 of 3 available")
