"""Shared helpers of the benchmark scripts: result rows, load average, a cache folder."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
DEFAULT_CACHE = ROOT / "test-artifacts" / "bench-cache"  # git-ignored; `make clean` removes it


@dataclass
class Row:
    """One line of the summary table."""

    bench: str
    metric: str
    value: str
    goal: str = ""
    met: bool | None = None  # None: informational, no goal
    load: str = ""           # load average (1/5/15 min) when the benchmark finished

    @property
    def verdict(self) -> str:
        return "" if self.met is None else ("met" if self.met else "MISSED")


def loadavg() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def cache_dir(path: str | Path | None = None) -> Path:
    path = Path(path or os.environ.get("BENCH_CACHE_DIR") or DEFAULT_CACHE)
    path.mkdir(parents=True, exist_ok=True)
    return path


def print_rows(rows: list[Row]) -> None:
    headers = ("benchmark", "metric", "value", "goal", "verdict", "load avg")
    table = [headers] + [(r.bench, r.metric, r.value, r.goal, r.verdict, r.load) for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(headers))]
    for n, line in enumerate(table):
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def mux_repeated(container, stream, packets: list, base_frames: int, total_frames: int, fps: int) -> None:
    """Mux already-encoded packets (data, pts, dts, time_base, is_keyframe) again with shifted
    timestamps until the movie holds `total_frames`: a long movie without encoding it all (GOPs
    are closed, so it decodes exactly like a full encode whose content repeats)."""
    import av

    done = base_frames
    while done < total_frames:
        for data, pts, dts, tb, key in packets:
            shift = int(round(done / fps / tb))
            packet = av.Packet(data)
            packet.pts, packet.dts, packet.time_base, packet.stream = pts + shift, dts + shift, tb, stream
            packet.is_keyframe = key
            container.mux(packet)
        done += base_frames
