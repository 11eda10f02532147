"""Fair timing. The page stamps when the question's media are all shown (the frames image
decoded, or every player's first frame ready) and when the answer is clicked; `elapsed_sec` is the
time between the two, the time spent loading (question sent -> media shown) is `load_sec`, kept
apart. Both are rounded to 3 decimals as the released app rounds `elapsed_sec`. A page stamp that
is missing, for another question or longer than the server saw is not used: the server's time
(question sent -> answer received, loading included) is recorded instead and labelled so."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

TOLERANCE_S = 0.5   # the page may see a little more than the server (clock granularity, rounding)


@dataclass(frozen=True)
class Timing:
    elapsed_sec: float             # the record's elapsed_sec
    load_sec: float | None         # question sent -> media shown, as the page measured it
    source: str                    # "page", or "server" when the page's stamp could not be used
    server_elapsed_sec: float      # question sent -> answer received, on the server

    def fields(self) -> dict:
        return {"elapsed_sec": self.elapsed_sec, "load_sec": self.load_sec, "timing": self.source,
                "server_elapsed_sec": self.server_elapsed_sec}


def _seconds(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    return value / 1000.0


def from_page(stamp: str | None, key: str, server_elapsed: float) -> Timing:
    """The timing of an answer from the page's stamp (JSON {"key", "load_ms", "think_ms"})."""
    server = round(max(0.0, server_elapsed), 3)
    try:
        data = json.loads(stamp) if stamp else {}
    except (TypeError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    think, load = _seconds(data.get("think_ms")), _seconds(data.get("load_ms"))
    fits = think is not None and load is not None and think + load <= server_elapsed + TOLERANCE_S
    if data.get("key") == key and fits:
        return Timing(round(think, 3), round(load, 3), "page", server)
    return Timing(server, None, "server", server)
