"""The Impact timeline: labels in lanes that never collide, a time axis, seek targets."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from components.impact.data import ImpactItem
from components.impact.timeline import LABEL_ROOM, label_lanes, time_ticks, timeline_html

FPS = 24.0


def collide(a, b) -> bool:
    return a.lane == b.lane and a.left < b.left + b.room and b.left < a.left + a.room


def test_overlapping_windows_get_their_own_lanes_and_distant_ones_share_one():
    slots = label_lanes([40.0, 41.0, 42.5, 80.0])
    assert [s.lane for s in slots] == [0, 1, 2, 0]
    assert slots[0].room == pytest.approx(40.0)  # up to the next label of lane 0
    assert slots[1].room == pytest.approx(59.0) and slots[3].room == pytest.approx(20.0)


@pytest.mark.parametrize("starts", [[0, 0, 0], [10, 12, 13, 40, 90, 99], [99.9, 0.1, 50, 51, 52, 53],
                                    [i * 3.0 for i in range(30)]])
def test_no_two_labels_ever_share_space(starts):
    slots = label_lanes(starts)
    assert len(slots) == len(starts)
    for i, a in enumerate(slots):
        assert 0 <= a.left and a.left + a.room <= 100.0 + 1e-9
        for b in slots[i + 1:]:
            assert not collide(a, b), (a, b)


def test_a_label_near_the_right_end_moves_left_to_keep_its_room():
    (slot,) = label_lanes([99.0])
    assert slot.left == pytest.approx(100.0 - LABEL_ROOM) and slot.room == pytest.approx(LABEL_ROOM)


def test_time_ticks_are_round_seconds_within_the_clip():
    assert time_ticks(144, FPS) == [(0.0, 1), (1.0, 25), (2.0, 49), (3.0, 73), (4.0, 97), (5.0, 121)]
    ticks = time_ticks(24 * 600, FPS)  # ten minutes: a coarser step, still at most 7 ticks
    assert len(ticks) <= 7 and ticks[1][0] == 120.0 and ticks[-1][1] <= 24 * 600


def test_the_timeline_draws_labels_in_lanes_and_a_time_axis():
    item = ImpactItem(qid="h4", video=Path("clip.mp4"), query="q", num_frames=192, fps=FPS,
                      moments=[(40, 40), (42, 43), (150, 154)], frames={})
    html = timeline_html(item, [[1.6, 1.7, 0.9], [1.7, 1.8, 0.8], [1.75, 1.9, 0.7]], current_frame=41)
    labels = re.findall(r'class="impact-label" data-frame="(\d+)" data-lane="(\d+)".*?left:([\d.]+)%;max-width:([\d.]+)%',
                        html)
    assert len(labels) == 6
    truth, predicted = labels[:3], labels[3:]
    for row in (truth, predicted):
        assert len({lane for _, lane, _, _ in row[:2]}) == 2  # close windows: two lanes
        spans = [(int(lane), float(left), float(left) + float(width)) for _, lane, left, width in row]
        for i, a in enumerate(spans):
            for b in spans[i + 1:]:
                assert a[0] != b[0] or a[2] <= b[1] + 1e-6 or b[2] <= a[1] + 1e-6, (a, b)
    assert re.findall(r'class="impact-tick-label"[^>]*>([^<]+)<', html) == ["0 s", "2 s", "4 s", "6 s"]
    assert 'data-frame="49"' in html  # the 2 s tick seeks to frame 49
    assert "frame 41 = 1.67 s" in html
