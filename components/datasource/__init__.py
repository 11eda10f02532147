"""Where benchmark files come from: a local folder, or a Hugging Face dataset repository named as
`hf://datasets/<owner>/<name>[@revision][/subfolder]` anywhere a data folder is accepted.

    root = open_data_dir("hf://datasets/CedPei/TempCloze")  # lists the repository once; no media
    clip = local(root / "cloze/choices/bar_fill/GT.mp4")    # fetched now (Hub cache), then a file

The data modules ask their file questions here (`is_dir`, `entries`, `glob`, `size`, ...), which
answer from the repository's listing before a file is fetched and from the disk for a local
folder, and call `local(path)` before reading a file (the media layer does it for every video it
opens). `data_revision(path)` is the pinned `hf://...@<commit>` of data from a repository, which
run outputs and study results record. docs/architecture.md, "Data sources".
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from components.datasource.fetching import SOURCE_MARKER, FetchReport, fetch_all, mirror
from components.datasource.hub import DataSourceError, storage_folder
from components.datasource.mounts import entries, exists, glob, is_dir, is_file, local, local_all, size, \
    source_of, stamp, subfolders
from components.datasource.repos import OpenedRepo, listed, mirror_dir, open_file, open_repo, opened_repos
from components.datasource.spec import FORM, HubSpec, as_source, is_hub_spec, parse_spec

__all__ = ["DataSourceError", "FORM", "FetchReport", "fetch_all", "mirror", "HubSpec", "OpenedRepo", "allowed_paths", "as_source", "data_revision",
           "entries", "exists", "glob", "is_dir", "is_file", "is_hub_spec", "local", "local_all",
           "mirror_dir", "open_data_dir", "open_data_path", "open_repo", "parse_spec", "size", "stamp",
           "subfolders"]


def open_data_dir(value: str | Path) -> Path:
    """The folder to read: a local path as it is; a repository spec opened (revision resolved,
    files listed once, layout checked) and its mirror folder returned."""
    if not is_hub_spec(value):
        return Path(value)
    return open_repo(parse_spec(str(value))).root


def open_data_path(value: str | Path) -> Path:
    """Like open_data_dir, but a spec may also name one file (`.../grounding/annotations.json`),
    which is fetched and returned."""
    if not is_hub_spec(value):
        return Path(value)
    spec = parse_spec(str(value))
    if spec.subfolder:
        _, files = listed(spec)
        if spec.subfolder in files:
            return open_file(spec)
    return open_repo(spec).root


def _marker_source(folder: str) -> str | None:
    """The source a `.hub-source.json` in `folder` or a folder above it names."""
    while True:
        try:
            with open(os.path.join(folder, SOURCE_MARKER), encoding="utf-8") as fh:
                value = json.load(fh).get("source")
            if value:
                return str(value)
        except (OSError, ValueError, AttributeError):
            pass
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def data_revision(path: str | Path) -> str | None:
    """`hf://datasets/o/n@<commit>[/folder]` for data that came from a repository (opened here, or
    mirrored by `app.py fetch`, whose folder says so); None for a plain local folder."""
    found = source_of(path)
    if found:
        return found
    folder = os.path.abspath(path)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    return _marker_source(folder)


def allowed_paths() -> list[str]:
    """Folders a web server must be allowed to serve for the repositories opened so far: each
    mirror and the repository's Hub cache folder its links point into."""
    out: list[str] = []
    for repo in opened_repos():
        out += [str(repo.root), str(storage_folder(repo.spec.repo_id).resolve())]
    return out
