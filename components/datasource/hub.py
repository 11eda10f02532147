"""The only module that talks to the Hugging Face Hub, through `huggingface_hub` (its HTTP client,
its cache, its auth: HF_TOKEN or a saved login): a revision resolved to its commit, a folder
listed once per commit (kept on disk, so a restart or an offline run lists nothing), a file
fetched into the Hub cache, and every failure said in one line naming the repository, the file
and what to do.

The endpoint (HF_ENDPOINT) and the cache (HF_HUB_CACHE, HF_HOME) are read when a call is made,
not when this module is imported; `huggingface_hub` itself reads HF_HUB_OFFLINE at its import.
A download is written by the library to a temporary file of its own and renamed into place once
its size is checked, so no reader ever sees half a file (tests/datasource check it with a
connection cut in the middle of one).
"""
from __future__ import annotations

import json
import logging
import os
import threading
from contextlib import contextmanager
from pathlib import Path

from components.base.errors import UserError
from components.base.io import atomic_write_json, atomic_write_text
from components.datasource.spec import HubSpec

LISTING_FORMAT = 1
DEFAULT_ENDPOINT = "https://huggingface.co"
#: the Hub lists at most this many files in a repository's info (`siblings`); a larger repository
#: is listed with the tree endpoint, 1,000 entries a page
SIBLINGS_CAP = 100_000


class DataSourceError(UserError):
    """A repository could not be opened or a file of it fetched; the message says what to do."""


#: huggingface_hub's loggers that narrate each retry ("Error while downloading from ...", "Trying
#: to resume download...", "Retrying in 1s [Retry 1/5]"): 12 to 108 lines before a cut download's
#: one line. Inside this module's calls they are dropped: a retry that succeeds needs no word, one
#: that fails is said once, by `explain`.
_RETRY_LOGGERS = ("huggingface_hub.file_download", "huggingface_hub.utils._http")
_quiet = threading.local()


_everywhere = [0]         # blocks that silence every thread (a mirror's download pool)
_everywhere_lock = threading.Lock()


class _InsideOurCall(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (getattr(_quiet, "depth", 0) or _everywhere[0])


_FILTER = _InsideOurCall()


@contextmanager
def quiet_retries(*, all_threads: bool = False):
    """The library's retry narration silenced while the block runs: in this thread (other callers
    of huggingface_hub keep their logging), or in every thread for a call that downloads in a pool
    of its own (`all_threads`: snapshot_download)."""
    for name in _RETRY_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    _quiet.depth = getattr(_quiet, "depth", 0) + 1
    if all_threads:
        with _everywhere_lock:
            _everywhere[0] += 1
    try:
        yield
    finally:
        _quiet.depth -= 1
        if all_threads:
            with _everywhere_lock:
                _everywhere[0] -= 1


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def cache_dir() -> Path:
    """The Hub cache huggingface_hub downloads into (HF_HUB_CACHE, else HF_HOME/hub)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                     os.path.join(Path.home(), ".cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def storage_folder(repo_id: str) -> Path:
    """The repository's folder in the Hub cache (blobs/, snapshots/, refs/)."""
    return cache_dir() / ("datasets--" + repo_id.replace("/", "--"))


def offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.is_offline_mode())


def repo_url(repo_id: str) -> str:
    return f"{endpoint()}/datasets/{repo_id}"


def _token_set() -> bool:
    from huggingface_hub import get_token

    return bool(get_token())


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__


def explain(exc: BaseException, spec: HubSpec, file: str | None = None, commit: str | None = None) -> DataSourceError:
    """One line for a failure of huggingface_hub (or of the connection under it)."""
    import httpx2
    from huggingface_hub.errors import (GatedRepoError, LocalEntryNotFoundError, OfflineModeIsEnabled,
                                        RemoteEntryNotFoundError, RepositoryNotFoundError,
                                        RevisionNotFoundError, RevisionResolutionError)

    repo = f"hf://datasets/{spec.repo_id}"
    where = f"{repo}@{commit}" if commit else str(spec.at(subfolder=""))
    what = f" ({file})" if file else ""
    url = repo_url(spec.repo_id)
    if isinstance(exc, DataSourceError):
        return exc
    if isinstance(exc, GatedRepoError):
        if _token_set() and getattr(getattr(exc, "response", None), "status_code", None) == 403:
            return DataSourceError(f"{repo} is gated and the account of HF_TOKEN has not been granted "
                                   f"access{what}: accept its terms at {url} (or wait for the owners' "
                                   "approval), then run again.")
        return DataSourceError(f"{repo} is gated{what}: accept its terms at {url} while logged in, then "
                               "set HF_TOKEN to a read token of that account and run again.")
    if isinstance(exc, RevisionNotFoundError):
        return DataSourceError(f"{repo} has no revision '{spec.revision}': give a branch, tag or commit "
                               f"of {url} (leave '@{spec.revision}' out for the default branch).")
    if isinstance(exc, RemoteEntryNotFoundError):
        return DataSourceError(f"{where} has no '{file or spec.subfolder}': point at a folder or file "
                               f"listed at {url}/tree/{commit or spec.revision or 'main'}.")
    if isinstance(exc, RepositoryNotFoundError):
        if _token_set():
            return DataSourceError(f"{repo} was not found, or the account of HF_TOKEN cannot read it "
                                   f"(private){what}: check the name and the token's access at {url}.")
        return DataSourceError(f"{repo} was not found{what}: check the name at {url}; a private "
                               "dataset needs HF_TOKEN set to a read token of an account that can see it.")
    if offline() and isinstance(exc, (LocalEntryNotFoundError, OfflineModeIsEnabled, RevisionResolutionError)):
        if file:
            return DataSourceError(f"HF_HUB_OFFLINE=1 and {file} of {where} is not in the local cache "
                                   f"({cache_dir()}): unset HF_HUB_OFFLINE to download it, or mirror the "
                                   f"data beforehand with `python app.py fetch --data {spec} --out DIR`.")
        return DataSourceError(f"HF_HUB_OFFLINE=1 and {where} was never opened on this machine (nothing "
                               f"cached in {cache_dir()}): open it once online, or unset HF_HUB_OFFLINE.")
    if isinstance(exc, (httpx2.HTTPError, OSError, RevisionResolutionError, EOFError)):
        target = f"{file} from {where}" if file else where
        return DataSourceError(f"Could not download {target} ({_reason(exc)}) after the client's retries: "
                               f"check the connection to {endpoint()} and run again; files already "
                               "fetched are kept.")
    return DataSourceError(f"{where}{what}: {_reason(exc)}")


def _info(spec: HubSpec, revision: str | None, params: dict):
    """The repository's info (GET /api/datasets/<repo>[/revision/<rev>]) as JSON, through
    huggingface_hub's own session, headers (token) and error mapping. Parsed here rather than into
    a DatasetInfo: that builds one object per file (~1 s for TempCloze's 18,252)."""
    from urllib.parse import quote

    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    url = f"{endpoint()}/api/datasets/{spec.repo_id}"
    if revision:
        url += f"/revision/{quote(revision, safe='')}"
    response = get_session().get(url, headers=build_hf_headers(), params=params)
    hf_raise_for_status(response)
    return response.json()


def _save_ref(repo_id: str, revision: str, commit: str) -> None:
    """The Hub cache's `refs/<revision>` (what huggingface_hub reads offline), written atomically."""
    ref = storage_folder(repo_id) / "refs" / revision
    try:
        if not ref.exists() or ref.read_text() != commit:
            atomic_write_text(ref, commit, durable=False)
    except OSError:  # a read-only cache: resolving again next time is all it costs
        pass


def _unreachable(exc: BaseException) -> bool:
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    if isinstance(exc, (httpx2.TransportError, OfflineModeIsEnabled)):
        return True
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return isinstance(exc, HfHubHTTPError) and status is not None and status >= 500


def resolve_commit(spec: HubSpec) -> str:
    """The commit the spec's revision names now: one small info request (only its `sha`). A pinned
    commit is itself; offline, or with the Hub unreachable, the commit the Hub cache's refs/ kept
    from the last time (huggingface_hub's resolve_revision reads them)."""
    if spec.pinned:
        return str(spec.revision)
    revision = spec.revision or "main"
    if not offline():
        try:
            with quiet_retries():
                commit = str(_info(spec, spec.revision, {"expand": "sha"})["sha"])
        except Exception as exc:  # noqa: BLE001 - every failure becomes one line
            if not _unreachable(exc):
                raise explain(exc, spec) from None
        else:
            _save_ref(spec.repo_id, revision, commit)
            return commit
    from huggingface_hub import HfApi

    try:
        resolved = HfApi(endpoint=endpoint()).resolve_revision(
            spec.repo_id, repo_type="dataset", revision=revision, cache_dir=str(cache_dir()),
            local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        raise explain(exc, spec) from None
    return str(resolved.resolved)


def _listing_file(repo_id: str, commit: str, folder: str) -> Path:
    base = Path(os.environ.get("APP_CACHE_DIR") or Path.home() / ".cache" / "video-bench-explorer")
    name = commit + (("@" + folder.replace("/", "%2F")) if folder else "") + ".json"
    return base.expanduser() / "hub-listings" / ("datasets--" + repo_id.replace("/", "--")) / name


def _read_listing(path: Path) -> dict[str, int] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != LISTING_FORMAT or not isinstance(data.get("files"), dict):
        return None
    return {str(k): int(v) for k, v in data["files"].items()}


def _write_listing(path: Path, files: dict[str, int]) -> None:
    try:
        atomic_write_json(path, {"format": LISTING_FORMAT, "files": files}, indent=None, durable=False)
    except OSError:  # a read-only cache: listing again next time is all it costs
        pass


def _info_files(spec: HubSpec, commit: str) -> dict[str, int] | None:
    """Every file of the repository with its size, from one info call (`files_metadata`); None
    when the Hub may have left files out (as many as it lists at most) or gave no sizes."""
    siblings = _info(spec, commit, {"blobs": "true"}).get("siblings") or []
    if len(siblings) >= SIBLINGS_CAP or any(not isinstance(s.get("size"), int) for s in siblings):
        return None
    return {str(s["rfilename"]): int(s["size"]) for s in siblings}


def list_folder(spec: HubSpec, commit: str, folder: str) -> dict[str, int]:
    """Every file under `folder` of the repository at `commit`: path relative to it -> size. One
    listing per commit and folder, kept on disk (a commit never changes): the repository's info
    with its files' sizes, one request (1,521 TempCloze stems are 18,252 files; the tree endpoint
    would take 25 pages), or the tree's pages for a repository larger than the info lists."""
    cached_at = _listing_file(spec.repo_id, commit, folder)
    cached = _read_listing(cached_at)
    if cached is not None:
        return cached
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    try:
        if offline():
            from huggingface_hub.errors import OfflineModeIsEnabled
            raise OfflineModeIsEnabled("offline")
        cut = len(folder) + 1 if folder else 0
        with quiet_retries():
            everything = _info_files(spec, commit)
            if everything is not None:
                files = {p[cut:]: size for p, size in everything.items() if not folder or p.startswith(folder + "/")}
            else:
                tree = HfApi(endpoint=endpoint()).list_repo_tree(
                    spec.repo_id, path_in_repo=folder or None, recursive=True, revision=commit, repo_type="dataset")
                files = {entry.path[cut:]: int(entry.size) for entry in tree if isinstance(entry, RepoFile)}
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        raise explain(exc, spec, commit=commit) from None
    _write_listing(cached_at, files)
    return files


def _silent_bar():
    from tqdm.auto import tqdm

    class Silent(tqdm):  # one bar per file would flood a server's log and a run's own bar
        def __init__(self, *args, **kwargs):
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
    return Silent


def download(spec: HubSpec, commit: str, repo_path: str) -> str:
    """The file `repo_path` of the repository at `commit`, fetched into the Hub cache if it is not
    there yet (nothing is asked of the Hub when it is); returns its path in the cache."""
    from huggingface_hub import hf_hub_download

    try:
        with quiet_retries():
            return hf_hub_download(spec.repo_id, repo_path, repo_type="dataset", revision=commit,
                                   cache_dir=str(cache_dir()), endpoint=endpoint(), tqdm_class=_silent_bar())
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        raise explain(exc, spec, file=repo_path, commit=commit) from None
