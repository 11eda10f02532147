"""Table 7 prompts: the files are the text checked against the paper (pinned in docs/prompts.md);
variant choice; frame budget."""
from __future__ import annotations

import pytest

from components.impact.temporal_prompt import (MAX_FRAMES, STYLES, frame_label, prompt_template,
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
    assert set(STYLES) == {"open", "gemini", "gpt"}
