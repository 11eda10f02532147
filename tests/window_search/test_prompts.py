"""The prompt files are Appendix G word for word, and the messages are built from them."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

from components.window_search import prompts
from components.window_search.types import Chunk, Statement


def _shared() -> Path:
    beside = Path(__file__).resolve().parents[2].parent / "shared"
    return beside if (beside / "papers").is_dir() else Path("/work/shared")


PAPER = _shared() / "papers" / "com2bench-agentic-window-search.md"


@pytest.fixture(scope="module")
def appendix_g() -> str:
    text = PAPER.read_text(encoding="utf-8")
    start = text.index("## Appendix G Prompts")
    return text[start:]


def between(text: str, *markers: str, end: str | None) -> str:
    """The text after the last of `markers` (each searched after the previous) up to `end`."""
    pos = 0
    for m in markers:
        pos = text.index(m, pos) + len(m)
    stop = text.index(end, pos) if end else len(text)
    return text[pos:stop]


def norm(text: str) -> str:
    """Compare words, not layout: PDF extraction lost spaces and curled the quotes."""
    text = text.translate(str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'",
                                         "\u2019": "'"}))
    return re.sub(r"\s+", "", text)


CASES = [
    (["aws_decompose_system"], ("Decompose splits", "System prompt"), "User template"),
    (["aws_decompose_user"], ("Decompose splits", "User template"),
     "Character candidates appended to the user template"),
    (["aws_decompose_cast_header", "aws_decompose_cast_person", "aws_decompose_cast_ref"],
     ("Character candidates appended to the user template",), "Inspect checks each candidate"),
    (["aws_inspect_system"], ("Inspect checks each candidate", "System prompt"), "User template"),
    (["aws_inspect_user"], ("Inspect checks each candidate", "User template"),
     "Optional subtitle template"),
    (["aws_inspect_subtitles_header", "aws_inspect_subtitle_line"],
     ("Optional subtitle template",), "Available budget message"),
    (["aws_budget_available"], ("Available budget message",), "Exhausted budget message"),
    (["aws_budget_exhausted"], ("Exhausted budget message",), "Message when expansion is masked"),
    (["aws_budget_masked"], ("Message when expansion is masked",), "Select chooses a fallback"),
    (["aws_select_system"], ("Select chooses a fallback", "System prompt"), "User template"),
    (["aws_select_user"], ("Select chooses a fallback", "User template"),
     "Repeated candidate template"),
    (["aws_select_candidate"], ("Repeated candidate template",), "Closing instruction"),
    (["aws_select_closing"], ("Closing instruction",), None),
]


@pytest.mark.parametrize("files,markers,end", CASES, ids=lambda c: c[0] if isinstance(c, list) else "")
def test_prompt_files_match_the_paper_word_for_word(appendix_g, files, markers, end):
    ours = "".join(prompts.load_prompt(f) for f in files)
    paper = between(appendix_g, *markers, end=end)
    assert len(norm(paper)) > 10
    assert norm(ours) == norm(paper)


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
