"""Fetching many files ahead (a batch run's, before it starts): side by side with a bound, with a
progress bar in bytes, resumable (a file already fetched is a local file and is skipped), and
`fetch`, the mirror of a whole repository (or folder) into a local folder for offline work."""
from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from components.base.io import atomic_write_json
from components.datasource import hub
from components.datasource.hub import DataSourceError
from components.datasource.mounts import find, local
from components.datasource.repos import listed
from components.datasource.spec import HubSpec, parse_spec

DEFAULT_WORKERS = 8
#: in a folder `mirror` wrote: the pinned source, so runs on the copy record it (data_revision)
SOURCE_MARKER = ".hub-source.json"


@dataclass(frozen=True)
class FetchReport:
    files: int      # repository files asked for
    fetched: int    # of them downloaded now (the rest were on this machine already)
    bytes: int      # listed size of the downloaded ones


def fetch_all(paths: Iterable[str | Path], *, workers: int = DEFAULT_WORKERS, progress: bool = True,
              desc: str = "fetching") -> FetchReport:
    """Every repository file among `paths` fetched (local paths are left alone), `workers` at a
    time. A failure stops nothing else; afterwards the first one is raised, with the count of the
    others (rerun: what was fetched is kept)."""
    todo: dict[str, int] = {}
    asked = 0
    for path in paths:
        text = os.path.abspath(path)
        if text in todo:
            continue
        hit = find(text)
        if hit is None or not hit[0].index.is_file(hit[1]):
            continue
        asked += 1
        if not os.path.exists(text):
            todo[text] = hit[0].index.files[hit[1]]
    if not todo:
        return FetchReport(asked, 0, 0)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=sum(todo.values()), desc=desc, unit="B", unit_scale=True, unit_divisor=1024)
    errors: dict[int, DataSourceError] = {}

    def one(item: tuple[int, tuple[str, int]]) -> None:
        index, (path, nbytes) = item
        try:
            local(path)
        except DataSourceError as exc:
            errors[index] = exc
        if bar is not None:
            bar.update(nbytes)

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="hub-fetch") as pool:
        list(pool.map(one, enumerate(todo.items())))
    if bar is not None:
        bar.close()
    if errors:  # the first of the paths asked for, whatever finished first
        more = f" ({len(errors) - 1} more file(s) failed the same way)" if len(errors) > 1 else ""
        raise DataSourceError(f"{errors[min(errors)]}{more}")
    return FetchReport(asked, len(todo), sum(todo.values()))


def mirror(spec: HubSpec | str, out: str | Path, *, workers: int = DEFAULT_WORKERS,
           progress: bool = True) -> Path:
    """The spec's files (its folder's, or the whole repository's) downloaded into `out`, keeping the
    repository's paths, by huggingface_hub's snapshot_download (resumable: finished files are
    skipped). `out/.hub-source.json` names the commit, so runs on the copy record it too. Returns
    the folder holding the data (`out/<subfolder>`)."""
    spec = parse_spec(spec) if isinstance(spec, str) else spec
    commit, files = listed(spec)
    if spec.subfolder and spec.subfolder not in files and not any(
            p.startswith(spec.subfolder + "/") for p in files):
        raise DataSourceError(f"{spec.at(revision=commit)} has no folder or file '{spec.subfolder}'.")
    from huggingface_hub import snapshot_download

    out = Path(out)
    patterns = [spec.subfolder, f"{spec.subfolder}/*"] if spec.subfolder else None
    kwargs = {} if progress else {"tqdm_class": hub._silent_bar()}
    try:
        with hub.quiet_retries(all_threads=True):
            snapshot_download(spec.repo_id, repo_type="dataset", revision=commit, local_dir=str(out),
                              allow_patterns=patterns, max_workers=max(1, workers), endpoint=hub.endpoint(),
                              cache_dir=str(hub.cache_dir()), **kwargs)
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        raise hub.explain(exc, spec, commit=commit) from None
    pinned = str(spec.at(revision=commit))
    atomic_write_json(out / SOURCE_MARKER, {"source": pinned, "repo": spec.repo_id, "revision": spec.revision,
                                            "commit": commit, "subfolder": spec.subfolder})
    return out / spec.subfolder if spec.subfolder else out
