"""Shared media layer: the only place decord / PyAV / pysubs2 are imported (lazily).

Public API (import from here):
    Frame, VideoInfo, VideoSource, open_video, frames_decoded, VideoIndex, build_index (the PTS timeline)
    bin_centred_indices, endpoint_indices, fps_times, time_to_index, index_to_time
    resize_max_side, resize_max_height, resize_max_height_opencv, to_jpeg_bytes
    mark_kept, is_kept (an image a cache holds, encoded once for the page)
    cut_clip, reverse_clip, reorder_thirds, loop_segment, write_frames, write_video_from_arrays
    Cue, load_subtitles, cues_in_window
    file_identity, DiskCache, default_cache_dir
"""
from components.media.frames import Frame, bin_centred_indices, endpoint_indices, fps_times, \
    index_to_time, is_kept, mark_kept, resize_max_height, resize_max_height_opencv, resize_max_side, \
    time_to_index, to_jpeg_bytes
from components.media.index import VideoIndex, build_index
from components.media.video import VideoInfo, VideoSource, frames_decoded, open_video
from components.media.clips import cut_clip, loop_segment, reorder_thirds, reverse_clip, \
    write_frames, write_video_from_arrays
from components.media.subtitles import Cue, cues_in_window, load_subtitles
from components.media.cache import DiskCache, default_cache_dir, file_identity

__all__ = [
    "Frame", "VideoInfo", "VideoSource", "open_video", "frames_decoded", "VideoIndex", "build_index",
    "bin_centred_indices", "endpoint_indices", "fps_times", "time_to_index", "index_to_time",
    "resize_max_side", "resize_max_height", "resize_max_height_opencv", "to_jpeg_bytes", "mark_kept", "is_kept",
    "cut_clip", "reverse_clip", "reorder_thirds", "loop_segment", "write_frames",
    "write_video_from_arrays",
    "Cue", "load_subtitles", "cues_in_window",
    "file_identity", "DiskCache", "default_cache_dir",
]
