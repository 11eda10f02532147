"""A tab's runs read at once, in the test's thread (the app reads them in the background, through
`RunReader.loader`): its own folders, the `named` ones and APP_RUNS_DIR's (`cache`: none by
default); a named folder without this tab's runs is no error."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from components.cloze.runs import CLOZE_READER
from components.common.runs import ContentCache, LoadedRuns, RunReader, collect, named_runs_folders
from components.impact.runs import IMPACT_READER
from components.window_search.runs import GROUNDING_READER


def collect_runs(reader: RunReader, data_dir: str | Path | None, named: Iterable[str | Path] = (),
                 cache: ContentCache | None = None) -> LoadedRuns:
    return collect(reader, reader.folders(data_dir), named_runs_folders(named), cache, empty_ok=True)


def collect_cloze_runs(data_dir: str | Path | None, named: Iterable[str | Path] = (),
                       cache: ContentCache | None = None) -> LoadedRuns:
    return collect_runs(CLOZE_READER, data_dir, named, cache)


def collect_impact_runs(data_dir: str | Path | None, named: Iterable[str | Path] = (),
                        cache: ContentCache | None = None) -> LoadedRuns:
    return collect_runs(IMPACT_READER, data_dir, named, cache)


def collect_grounding_runs(data_dir: str | Path | None, named: Iterable[str | Path] = (),
                           cache: ContentCache | None = None) -> LoadedRuns:
    return collect_runs(GROUNDING_READER, data_dir, named, cache)


def read_item_rows(path: str | Path) -> list[dict]:
    """The rows `eval --items` wrote (components/common/runs.py `write_item_rows`; score as a float
    or None)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        for r in rows:
            r["score"] = float(r["score"]) if r["score"] != "" else None
        return rows
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def mean_score(rows: Iterable[Mapping], run: str) -> float | None:
    """The mean of a run's scores (rows without a score left out), x 100: the eval's score."""
    values = [r["score"] for r in rows if r["run"] == run and r["score"] is not None]
    return 100.0 * sum(values) / len(values) if values else None
