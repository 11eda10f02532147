"""A tab's runs read at once, in the test's thread (the app reads them in the background, through
`RunReader.loader`): its own folders, the `named` ones and APP_RUNS_DIR's (`cache`: none by
default); a named folder without this tab's runs is no error."""
from __future__ import annotations

from collections.abc import Iterable
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
