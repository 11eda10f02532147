"""Upload limits are configurable and say what the limit is."""
from __future__ import annotations

import pytest

from components.base.errors import UserError
from components.common.limits import DEFAULT_MAX_VIDEO_SECONDS, check_video_duration, max_video_seconds


def test_default_limit_admits_a_feature_film_and_refuses_longer(monkeypatch):
    monkeypatch.delenv("APP_MAX_VIDEO_SECONDS", raising=False)
    assert max_video_seconds() == DEFAULT_MAX_VIDEO_SECONDS
    check_video_duration("film.mp4", 3 * 3600)
    with pytest.raises(UserError, match=r"film\.mp4 is 241\.0 min long.*240 min"):
        check_video_duration("film.mp4", 4 * 3600 + 60)


def test_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("APP_MAX_VIDEO_SECONDS", "600")
    with pytest.raises(UserError, match="APP_MAX_VIDEO_SECONDS"):
        check_video_duration("/uploads/clip.mp4", 601)
    check_video_duration("/uploads/clip.mp4", 600)
