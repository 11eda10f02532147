"""The localizer: reply parsing, clamping into the window, fallbacks, the baseline."""
from __future__ import annotations

import pytest

from components.media import Cue, Frame, fps_times
from components.window_search.localizer import fit_interval, localize, to_seconds
from components.window_search.replies import IntervalParseError, parse_interval
from tests.window_search.agent_fixtures import ScriptedBackend, frame_times, texts


@pytest.mark.parametrize("text,expected", [
    ("[12.5, 20]", (12.5, 20.0)),
    ("The event happens in 812.0 - 871.5 seconds.", (812.0, 871.5)),
    ("The event happens in 812 – 871.5 seconds", (812.0, 871.5)),
    ("It happens from 30s to 45s.", (30.0, 45.0)),
    ("from 30 seconds until 45 seconds", (30.0, 45.0)),
    ("between 65 and 70 seconds", (65.0, 70.0)),
    ("00:01:05 - 00:01:10", (65.0, 70.0)),
    ("1:05 to 1:10", (65.0, 70.0)),
    ("01:02:03.5 - 01:02:10", (3723.5, 3730.0)),
    ('{"start": 3.5, "end": "7s"}', (3.5, 7.0)),
    ('```json\n{"start_time": "00:10", "end_time": "00:20"}\n```', (10.0, 20.0)),
    ("The moment starts at 40.5 and ends at 52.", (40.5, 52.0)),
    ("<100.0 seconds> The event happens in 101 - 104 seconds", (101.0, 104.0)),
    ("<think>maybe 1 - 2</think>Answer: 5 - 9 seconds", (5.0, 9.0)),
])
def test_parse_interval(text, expected):
    assert parse_interval(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["", "I cannot tell.", "around 40 seconds", "<100.0 seconds>"])
def test_unparseable_intervals(text):
    with pytest.raises(IntervalParseError):
        parse_interval(text)


def test_to_seconds():
    assert to_seconds("75") == 75 and to_seconds("1:15") == 75 and to_seconds("0:01:15.5") == 75.5


@pytest.mark.parametrize("pair,expected,relative", [
    ((110.0, 130.0), (110.0, 130.0), False),
    ((130.0, 110.0), (110.0, 130.0), False),     # reversed ends swapped
    ((90.0, 130.0), (100.0, 130.0), False),      # clamped at the window start
    ((150.0, 190.0), (150.0, 160.0), False),     # clamped at the window end
    ((5.0, 12.0), (105.0, 112.0), True),         # wholly outside, fits the window: relative
])
def test_fit_interval(pair, expected, relative):
    assert fit_interval(pair, (100.0, 160.0)) == (expected, relative)


def test_fit_interval_rejects_far_outside():
    with pytest.raises(IntervalParseError, match="outside"):
        fit_interval((500.0, 520.0), (100.0, 160.0))


class FrameMovie:
    movie_id, duration = "m", 300.0

    def __init__(self, cues=()):
        from PIL import Image
        self._img = Image.new("RGB", (8, 6))
        self._cues = list(cues)
        self.calls = []

    def frames(self, start, end, fps=1.0, cap=None):
        self.calls.append((start, end, fps, cap))
        return [Frame(self._img, t, int(t)) for t in fps_times(start, end, fps, cap)]

    def cues(self, start, end):
        return [c for c in self._cues if c.end > start and c.start < end]


def test_localize_with_a_model():
    be = ScriptedBackend(fn=lambda req: "The event happens in 112.5 - 104 seconds.")
    movie = FrameMovie()
    res = localize("Lloyd falls", (100.0, 160.0), movie, be, fps=1.0, cap=16, ref="q7")
    assert res.interval == (104.0, 112.5) and res.method == "vlm" and res.error is None
    (req,) = be.requests
    assert req.task == "aws.localize" and req.ref == "q7" and req.params.temperature == 0.0
    times = frame_times(req.messages[0])
    assert len(times) == 16 and times[0] == 100.0 and times[-1] < 160.0
    body = texts(req.messages[0])
    assert 'query "Lloyd falls"' in body and "from 100.0 seconds to 160.0 seconds" in body


def test_localize_respects_the_backend_image_cap():
    be = ScriptedBackend(fn=lambda req: "[0, 10]", max_images=5)
    res = localize("q", (100.0, 160.0), FrameMovie(), be, cap=32)
    assert be.requests[0].num_images() == 5
    assert res.interval == (100.0, 110.0) and res.method == "vlm-relative"


def test_localize_retries_then_falls_back_to_the_window():
    be = ScriptedBackend(fn=lambda req: "no idea")
    res = localize("q", (100.0, 160.0), FrameMovie(), be, max_retries=2)
    assert len(be.requests) == 3 and res.attempts == 3
    assert res.interval == (100.0, 160.0) and res.method == "vlm-fallback-window"
    assert res.raw == "no idea" and "unparsed" in res.error


def test_localize_retry_succeeds():
    answers = iter(["hmm", "from 120 to 130 seconds"])
    be = ScriptedBackend(fn=lambda req: next(answers))
    res = localize("q", (100.0, 160.0), FrameMovie(), be)
    assert res.interval == (120.0, 130.0) and res.attempts == 2 and res.error is None


def test_baseline_localizer_uses_matching_subtitles_or_the_window():
    cues = [Cue(101, 104, "good morning"), Cue(120, 123, "Lloyd falls into the snow"),
            Cue(125, 128, "Lloyd falls again in the snow"), Cue(170, 175, "Lloyd falls outside")]
    movie = FrameMovie(cues)
    res = localize("Lloyd falls into the snow", (100.0, 160.0), movie, None, embedder="lexical")
    assert res.interval == (120.0, 128.0) and res.method == "baseline-subtitles"
    res = localize("A dog barks", (100.0, 160.0), movie, None, embedder="lexical")
    assert res.interval == (100.0, 160.0) and res.method == "baseline-window"
    assert movie.calls == []   # the baseline reads no frames
