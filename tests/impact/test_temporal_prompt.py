"""Table 7 prompts: the files are the text checked against the paper (pinned in docs/prompts.md);
variant choice; frame budget."""
from __future__ import annotations

import pytest

from components.impact.prompts.temporal import (MAX_FRAMES, STYLES, frame_label, prompt_template,
                                               render_prompt, sample_count, style_for_backend,
                                               uniform_indices)
from tests.helpers.prompt_pins import assert_pinned


@pytest.mark.parametrize("style", STYLES)
def test_prompt_files_are_the_text_checked_against_the_paper(style):
    assert_pinned(f"hapact_temporal_{style}.txt")
    text = prompt_template(style)
    assert "\u201c" not in text and "\u2019" not in text and "  " not in text  # straight, spaced
    assert text.count("{query}") == 1


def test_query_is_filled_in():
    prompt = render_prompt("gpt", "A man is struck behind the knees by a staff.")
    assert 'described by the sentence "A man is struck behind the knees by a staff."' in prompt
    assert "{query}" not in prompt


@pytest.mark.parametrize("backend_id,expected", [
    ("openai:gpt-4o", "gpt"), ("openai:gpt-5.4", "gpt"), ("openai:o3", "gpt"), ("openai:o4-mini", "gpt"),
    ("openai:o1", "gpt"), ("openai:gemini-3.1-pro", "gemini"), ("openai:google/gemini-2.5-pro", "gemini"),
    ("hf:Qwen/Qwen3-VL-8B-Instruct", "open"), ("hf:OpenGVLab/InternVL3_5-8B", "open"),
    ("openai:qwen3-vl-32b", "open"), ("hf:/tmp/tiny-qwen25vl", "open")])
def test_variant_from_the_backend_id(backend_id, expected):
    assert style_for_backend(backend_id) == expected


def test_explicit_override_wins():
    assert style_for_backend("openai:gpt-4o", "open") == "open"
    assert style_for_backend("hf:qwen", "gemini") == "gemini"
    assert style_for_backend("hf:qwen", "auto") == "open"
    with pytest.raises(ValueError):
        style_for_backend("hf:qwen", "claude")


def test_frame_labels():
    assert frame_label("gpt", 57 / 24) == "Frame at 2.375s:"
    assert frame_label("gemini", 61.5) == "01:01.500"
    assert frame_label("open", 1.0) == "1.000s"


def test_frame_budget():
    assert MAX_FRAMES == 192
    assert sample_count(300) == 192
    assert sample_count(156) == 156  # shorter clip: all its frames
    assert sample_count(300, backend_max_images=50) == 50
    assert sample_count(300, session_max_frames=32) == 32
    assert sample_count(20, backend_max_images=50, session_max_frames=32) == 20
    idx = uniform_indices(300, 192)
    assert len(idx) == 192 and len(set(idx)) == 192 and idx == sorted(idx) and idx[-1] < 300
    assert uniform_indices(10, 40) == list(range(10))
    # issue 13: the five other Table 7 rows are styles too
    assert set(STYLES) == {"open", "gemini", "gpt", "vtimellm", "trace", "groundedvideollm", "unitime",
                           "timelens"}


# HAPACT Table 7, the five rows added in issue 13, as printed (typographic quotes kept)
PAPER_ROWS = {
    "vtimellm": "This is a video with {num_frames} frames: <video> During which frames can we see the "
                "impact event \u201c{query}\u201d happening in the video? If the event occurs multiple "
                "separate times, return all intervals, not just the most salient one. Localize only the "
                "applied moment of impact, not the approach or aftermath. Return all intervals in "
                "chronological order. Answer only in the format: From s1 to e1; From s2 to e2.",
    "trace": "<video> Localize a series of moments in the video where the impact on a person\u2019s "
             "body described by \u201c{query}\u201d is physically applied, and output the start and end "
             "timestamps for each matching moment. The query may match multiple separate impact "
             "moments in the same video. Return all matching intervals, not just the most salient "
             "one. Localize only the applied moment of impact, not the approach or aftermath.",
    "groundedvideollm": "<video> <grounding> Give you a textual query: \u201c{query}\u201d. The described "
                        "content may occur multiple times in the video, where a physical impact is "
                        "applied to a person\u2019s body. When do all the described impact moments occur "
                        "in the video? Localize only the moment when the impact is physically applied "
                        "to the person, not the approach or aftermath. Please return all start and end "
                        "timestamps in chronological order.",
    "unitime": "This is a sequence interleaved with timestamps and frames. Your task is to identify the "
               "temporal window(s) (start and end timestamps) when the physical impact on a person\u2019s "
               "body described by the given query is applied. The query may match multiple separate "
               "impact moments in the video. Localize only the applied moment of impact, not the "
               "approach or aftermath. Query: {query} Answer:",
    "timelens": "You are given a video with multiple frames. The numbers before each video frame indicate "
                "its sampling timestamp (in seconds). Please find the physical impact on a person\u2019s "
                "body described by the sentence \u201c{query}\u201d, determining its starting and ending "
                "times. The query may match multiple separate impact moments in the same video. Localize "
                "only the moment of impact, not the approach or aftermath. The format should be: \u201cThe "
                "event happens in <start time 1> - <end time 1> seconds; <start time 2> - <end time 2> "
                "seconds; \u2026\u201d.",
}


def _straight(text: str) -> str:
    return text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")


@pytest.mark.parametrize("style", sorted(PAPER_ROWS))
def test_the_five_added_rows_are_the_papers_word_for_word(style):
    assert prompt_template(style) == _straight(PAPER_ROWS[style])


def test_video_styles_put_the_frames_where_video_stands_and_count_them():
    from PIL import Image

    from components.impact.prompts.temporal import build_messages, max_frames_for
    from components.media import Frame

    frames = [Frame(index=i, time=i / 24, image=Image.new("RGB", (8, 8))) for i in range(3)]
    content = build_messages("vtimellm", "q", frames)[0].content
    assert content[0] == "This is a video with 3 frames:"  # {num_frames} = the frames sent
    assert all(not isinstance(c, str) for c in content[1:4])  # frames, no timestamp labels
    assert content[4].startswith("During which frames can we see the impact event \"q\"")
    content = build_messages("trace", "q", frames)[0].content
    assert content[:2] == ["0.000s", frames[0].image] and content[-1].startswith("Localize a series")
    content = build_messages("timelens", "q", frames)[0].content
    assert content[0] == "0.000" and content[-1].startswith("You are given a video")
    assert "<video>" not in " ".join(c for c in content if isinstance(c, str))
    assert [max_frames_for(s) for s in ("vtimellm", "trace", "groundedvideollm", "unitime", "timelens")] \
        == [100, 128, 96, 192, 192]
    assert style_for_backend("openai:gpt-4o", "timelens") == "timelens"


def test_the_command_line_offers_every_style():
    from components.impact.cli import PROMPT_STYLES

    assert PROMPT_STYLES == ["auto", *STYLES]
