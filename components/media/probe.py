"""What a file holds, read from its container headers (no frame is decoded)."""
from __future__ import annotations

from pathlib import Path

from components.datasource import local

# (container suffix, codec) pairs every current browser plays in a <video> element
BROWSER_PLAYABLE = {(".mp4", "h264"), (".mp4", "av1"), (".webm", "vp8"), (".webm", "vp9"),
                    (".webm", "av1"), (".ogg", "theora")}


def video_codec(path: str | Path) -> str | None:
    """The first video stream's codec name (e.g. "h264"), or None when there is none or the file
    cannot be read."""
    import av

    try:
        with av.open(str(local(path))) as container:
            stream = next(iter(container.streams.video), None)
            return stream.codec_context.name if stream is not None else None
    except (av.FFmpegError, OSError, ValueError):
        return None


def browser_playable(path: str | Path) -> bool:
    """Whether a browser plays the file as it is (container and codec)."""
    return (Path(path).suffix.lower(), video_codec(path)) in BROWSER_PLAYABLE


def container_duration(path: str | Path) -> float | None:
    """The file's duration in seconds from its container header (no frame is decoded, nothing is
    fetched: a path not on disk gives None, as does a file that cannot be read)."""
    import os

    if not os.path.isfile(path):
        return None
    import av

    try:
        with av.open(str(path)) as container:
            if container.duration:
                return container.duration / av.time_base
            stream = next(iter(container.streams.video), None)
            if stream is not None and stream.duration and stream.time_base:
                return float(stream.duration * stream.time_base)
    except (av.FFmpegError, OSError, ValueError):
        return None
    return None
