"""Opening a repository as a data folder: its revision resolved once, its files listed once (per
process; the listing is kept on disk per commit), its layout recognised, and a local folder (the
*mirror*) mounted on it: the folder every tab is then pointed at.

The mirror of `hf://datasets/o/n[@rev][/sub]` is `$APP_HUB_MIRROR_DIR/o--n[@rev][--sub]` (default
under the app's cache folder). It holds links to the files fetched so far (into the Hub cache) and
what the app writes there (runs, study answers), which a new commit of the repository never
touches: only the links of the old commit are removed. `.hub-mirror.json` in it names the commit.

Layouts (the tabs' own, as for a local folder; each tab's row in the tab registry,
components/base/tabs.py, names them): a data folder with one or more tabs' data folders
(`grounding/`, `cloze/`, `impact/`); or one benchmark's folder, mounted as that tab's folder: a
folder its row's `holds` names (TempCloze's `choices/` or `choices_human/`), or an
`annotations.json` whose keys its row's `annotation_keys` names (CoM2-Bench pairs, HAPACT items).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from components.base import tabs as registry
from components.base.io import atomic_write_json
from components.base.lru import SingleFlightLRU
from components.datasource import hub
from components.datasource.hub import DataSourceError
from components.datasource.mounts import Index, Mount, add_mount, local, remove_mounts
from components.datasource.spec import HubSpec, parse_spec

MARKER = ".hub-mirror.json"  # in a lazy mirror (its links' commit); `fetch` copies carry SOURCE_MARKER
_SAFE = re.compile(r"[^A-Za-z0-9._@-]+")


@dataclass(frozen=True)
class OpenedRepo:
    spec: HubSpec            # as asked
    commit: str              # what the revision resolved to when it was opened
    root: Path               # the mirror folder (a data folder: the tabs' data folders in it)
    layout: str              # "data" (tabs' data folders in it) or the data folder of the one tab it holds
    index: Index             # the files of the spec's folder

    @property
    def pinned(self) -> str:
        """The spec at its commit: what a run output or study result records."""
        return str(self.spec.at(revision=self.commit))


def mirror_root() -> Path:
    env = os.environ.get("APP_HUB_MIRROR_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("APP_CACHE_DIR") or Path.home() / ".cache" / "video-bench-explorer"
    return Path(base).expanduser() / "hub"


def mirror_dir(spec: HubSpec) -> Path:
    """Where the spec's mirror lives (no network): an absolute path, never resolved, so the path
    a tab is given and the mount's root are the same string."""
    name = spec.repo_id.replace("/", "--")
    if spec.revision:
        name += "@" + spec.revision
    if spec.subfolder:
        name += "--" + spec.subfolder.replace("/", "--")
    return Path(os.path.abspath(mirror_root() / _SAFE.sub("_", name)))


def _under(files: dict[str, int], folder: str) -> dict[str, int]:
    if not folder:
        return dict(files)
    cut = len(folder) + 1
    return {p[cut:]: s for p, s in files.items() if p.startswith(folder + "/")}


def _annotation_tab(spec: HubSpec, commit: str, repo_path: str) -> str | None:
    """The data folder of the tab whose `annotation_keys` an annotations.json has (fetched: it is
    read anyway)."""
    try:
        data = json.loads(Path(hub.download(spec, commit, repo_path)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return next((tab.data for tab in registry.tabs() if any(key in data for key in tab.annotation_keys)), None)


def detect_layout(spec: HubSpec, commit: str, index: Index) -> str:
    """"data" for a data folder, else the data folder of the one tab whose benchmark the folder
    holds; one clear line when it is none of the layouts."""
    specs = registry.tabs()
    if any(index.is_dir(tab.data) for tab in specs):
        return "data"
    for tab in specs:
        if any(entry.endswith("/") and "*" not in entry and index.is_dir(entry.rstrip("/")) for entry in tab.holds):
            return tab.data
    if index.is_file("annotations.json"):
        tab = _annotation_tab(spec, commit, "/".join(p for p in (spec.subfolder, "annotations.json") if p))
        if tab:
            return tab
    here = ", ".join(sorted(index.entries(""))[:8]) or "nothing"
    raise DataSourceError(
        f"{spec} is none of the layouts: {_layouts(specs)}; it holds {here}. Point at the folder that "
        f"holds one, e.g. {spec.at(subfolder=(spec.subfolder + '/' if spec.subfolder else '') + '<folder>')}.")


def _layouts(specs: tuple[registry.TabSpec, ...]) -> str:
    """The layouts a folder may have, in words (from the tabs' rows)."""
    said = [f"a data folder ({', '.join(f'{tab.data}/' for tab in specs)})"]
    for tab in specs:
        name = tab.benchmark or tab.title
        folders = [entry for entry in tab.holds if entry.endswith("/") and "*" not in entry]
        if folders:
            said.append(f"{name}'s {' (or '.join(folders)}{')' * (len(folders) - 1)}")
        if tab.annotation_keys:
            said.append(f"an annotations.json of {name} (with {' or '.join(tab.annotation_keys)})")
    return ", ".join(said[:-1]) + ", or " + said[-1]


def _prepare_mirror(root: Path, opened: dict) -> None:
    """The mirror records the commit it links to; the links of another commit are removed (the
    app's own files in it are kept)."""
    root.mkdir(parents=True, exist_ok=True)
    marker = root / MARKER
    try:
        before = json.loads(marker.read_text(encoding="utf-8")).get("commit")
    except (OSError, ValueError, AttributeError):
        before = None
    if before and before != opened["commit"]:
        old = f"{os.sep}snapshots{os.sep}{before}{os.sep}"  # a link to the old commit's file
        for folder, _, names in os.walk(root):
            for name in names:
                path = os.path.join(folder, name)
                if os.path.islink(path) and old in os.readlink(path):
                    os.unlink(path)
    if before != opened["commit"] or not marker.exists():
        atomic_write_json(marker, opened)


#: repositories opened and listed in this process (a handful; one pushed out is opened again)
REPOS_KEPT = 64
_opened: SingleFlightLRU[str, OpenedRepo] = SingleFlightLRU(REPOS_KEPT)


def _fetcher(spec: HubSpec, commit: str, folder: str):
    def fetch(rel: str) -> str:
        return hub.download(spec, commit, "/".join(p for p in (folder, rel) if p))
    return fetch


_listed: SingleFlightLRU[tuple[str, str | None], tuple[str, dict[str, int]]] = SingleFlightLRU(REPOS_KEPT)


def listed(spec: HubSpec) -> tuple[str, dict[str, int]]:
    """(commit, every file of the repository) for the spec's revision: resolved and listed once
    per process, whichever folder or file of it is asked for."""
    def resolve_and_list() -> tuple[str, dict[str, int]]:
        commit = hub.resolve_commit(spec)
        return commit, hub.list_folder(spec, commit, "")
    return _listed.get((spec.repo_id, spec.revision), resolve_and_list)


def open_repo(spec: HubSpec | str) -> OpenedRepo:
    """The spec opened (once per process: a later call returns the same commit and listing)."""
    spec = parse_spec(spec) if isinstance(spec, str) else spec
    return _opened.get(str(spec), lambda: _open(spec))


def _open(spec: HubSpec) -> OpenedRepo:
    """Resolve, list, mount and check the spec (what `open_repo` does once per process)."""
    commit, files = listed(spec)
    if spec.subfolder and spec.subfolder not in files and not any(
            p.startswith(spec.subfolder + "/") for p in files):
        raise DataSourceError(f"{spec.at(revision=commit)} has no folder or file '{spec.subfolder}': "
                              f"point at one listed at {hub.repo_url(spec.repo_id)}/tree/{commit}.")
    index = Index(_under(files, spec.subfolder))
    layout = detect_layout(spec, commit, index)
    root = mirror_dir(spec)
    pinned = str(spec.at(revision=commit))
    _prepare_mirror(root, {"source": pinned, "repo": spec.repo_id, "revision": spec.revision,
                           "commit": commit, "subfolder": spec.subfolder, "layout": layout})
    remove_mounts(root)
    base = root
    add_mount(Mount(str(base if layout == "data" else base / layout), index,
                    _fetcher(spec, commit, spec.subfolder), pinned))
    opened = OpenedRepo(spec, commit, base, layout, index)
    _fetch_annotations(opened)
    return opened


def _fetch_annotations(opened: OpenedRepo) -> None:
    """The annotation files of the tabs whose data is an annotations.json (window search's and
    impact's: a few kB, read as soon as a tab shows), so their tabs find them where a local folder
    has them; nothing else is fetched at open."""
    for tab in (t.data for t in registry.tabs() if "annotations.json" in t.holds):
        if opened.layout == "data" and opened.index.is_file(f"{tab}/annotations.json"):
            local(opened.root / tab / "annotations.json")
        elif opened.layout == tab:
            local(opened.root / tab / "annotations.json")


def open_file(spec: HubSpec) -> Path:
    """A spec naming one file: its folder mounted (no layout asked of it), the file fetched; its
    local path."""
    commit, files = listed(spec)
    if spec.subfolder not in files:
        raise DataSourceError(f"{spec.at(revision=commit)} has no file '{spec.subfolder}': point at one "
                              f"listed at {hub.repo_url(spec.repo_id)}/tree/{commit}.")
    folder, _, name = spec.subfolder.rpartition("/")
    parent = spec.at(subfolder=folder)
    root = mirror_dir(parent)
    pinned = str(parent.at(revision=commit))
    _prepare_mirror(root, {"source": pinned, "repo": spec.repo_id, "revision": spec.revision,
                           "commit": commit, "subfolder": folder, "layout": "file"})
    add_mount(Mount(str(root), Index(_under(files, folder)), _fetcher(spec, commit, folder), pinned))
    return local(root / name)


def opened_repos() -> list[OpenedRepo]:
    return _opened.values()


def forget_all() -> None:
    """Tests: forget every opened repository and mount (nothing on disk changes)."""
    _opened.clear()
    _listed.clear()
    remove_mounts()
