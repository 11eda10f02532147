"""A small stand-in for the Hugging Face Hub on 127.0.0.1, answering the HTTP endpoints the real
`huggingface_hub` client calls for dataset repositories, so tests run the real client with no
internet (point it here with HF_ENDPOINT, see `hub_env`).

    with HubServer(latency_s=0.05) as hub:
        hub.add_repo("test/cloze", {"main": folder_a, "v2": folder_b}, gated=False)
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        ... open_data_dir("hf://datasets/test/cloze@v2") ...
        hub.downloads()  # repository paths whose bytes were sent, in order

Endpoints (as the Hub answers them; huggingface_hub/utils/_http.py reads the error headers):
  GET /api/datasets/<repo>[/revision/<rev>]       repo info: {"id", "sha", "private", "gated",
                                                  "siblings", ...}; ?blobs=true: each sibling's
                                                  size, blobId and lfs (the Hub lists at most
                                                  100,000 files there; `siblings_cap`);
                                                  ?expand=sha: that field alone
  GET /api/datasets/<repo>/tree/<rev>[/<path>]    listing (?recursive=, ?cursor=), pages of
                                                  `page_size` entries chained by a Link header
  HEAD|GET /datasets/<repo>/resolve/<rev>/<path>  a file: ETag, X-Repo-Commit, Content-Length;
                                                  large binary ("LFS") files answer 302 to
                                                  localhost/cdn/... (another origin), with X-Linked-Etag / X-Linked-Size
  GET /cdn/<repo>/<commit>/<path>                 the LFS bytes; Range requests answer 206
Errors: a missing repo, or a private one without an accepted token: 401 X-Error-Code
RepoNotFound (404 with a token); a missing revision: 404 RevisionNotFound; a missing file or
folder: 404 EntryNotFound; a gated repo's files without a token: 401 GatedRepo, with a token not
granted: 403 GatedRepo (its info and listing stay public, as on the Hub).

Faults: `latency_s` before every answer; `cut(path, at, times)` sends the first `at` bytes of the
file (from the start of each request's range) and closes the connection, `times` requests long.
Revisions are snapshots of the folders given (their file list when added; bytes read when sent).
A revision's commit is a sha1 of its repo and files (two names of one folder: one commit); the
commits are `repo_commits(repo)`.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

from components.datasource.repos import forget_all

LFS_SUFFIXES = (".mp4", ".mkv", ".webm", ".mov", ".avi", ".npz", ".npy", ".jpg", ".png", ".zip")
GOOD_TOKEN = "hf_test_reader"


@dataclass
class Revision:
    name: str
    commit: str
    folder: Path
    files: dict[str, int]                 # repo path -> size

    def dirs(self) -> set[str]:
        if self._dirs is None:
            out = set()
            for path in self.files:
                parts = path.split("/")[:-1]
                out.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
            self._dirs = out
        return self._dirs

    _dirs: set[str] | None = None


@dataclass
class Repo:
    repo_id: str
    revisions: dict[str, Revision]        # branch / tag name -> snapshot
    gated: bool = False
    private: bool = False
    tokens: tuple[str, ...] = (GOOD_TOKEN,)  # accepted (private) / granted (gated)

    def find(self, rev: str) -> Revision | None:
        rev = unquote(rev)
        if rev in self.revisions:
            return self.revisions[rev]
        return next((r for r in self.revisions.values() if r.commit == rev), None)


@dataclass
class Served:
    method: str
    path: str          # URL path
    status: int
    body_bytes: int    # bytes of the body sent
    repo_path: str | None = None  # the repository file, for resolve / cdn requests


@dataclass
class _Cut:
    at: int
    times: int


def _snapshot(folder: Path) -> dict[str, int]:
    files = {}
    for base, dirs, names in os.walk(folder, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            if name.startswith("."):
                continue
            path = Path(base) / name
            files[path.relative_to(folder).as_posix()] = path.stat().st_size
    return dict(sorted(files.items()))


class HubServer:
    def __init__(self, *, latency_s: float = 0.0, page_size: int = 1000, siblings_cap: int = 100_000) -> None:
        self.latency_s = latency_s
        self.page_size = page_size
        self.siblings_cap = siblings_cap
        self._trees: dict[tuple, object] = {}  # listings and info answers, made once
        self.repos: dict[str, Repo] = {}
        self.log: list[Served] = []
        self._cuts: dict[str, _Cut] = {}
        self._hashes: dict[tuple, str] = {}
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # -- setting up ---------------------------------------------------------------------------
    def add_repo(self, repo_id: str, revisions: Path | dict[str, Path], *, gated: bool = False,
                 private: bool = False, tokens: tuple[str, ...] = (GOOD_TOKEN,)) -> Repo:
        """Serve `repo_id`: one folder (branch main) or {revision name: folder}."""
        if not isinstance(revisions, dict):
            revisions = {"main": revisions}
        revs = {}
        for name, folder in revisions.items():
            files = _snapshot(Path(folder))
            digest = hashlib.sha1(json.dumps([repo_id, files]).encode()).hexdigest()
            revs[name] = Revision(name, digest, Path(folder), files)
        repo = Repo(repo_id, revs, gated=gated, private=private, tokens=tokens)
        self.repos[repo_id] = repo
        return repo

    def warm(self, repo_id: str) -> None:
        """Make each revision's listings now (content hashes included), so a timed client does not
        wait for this server to hash files the Hub has hashed at upload."""
        for rev in self.repos[repo_id].revisions.values():
            self._info_body(self.repos[repo_id], rev, True)
            self._tree(rev, "", True)

    def repo_commits(self, repo_id: str) -> dict[str, str]:
        return {name: rev.commit for name, rev in self.repos[repo_id].revisions.items()}

    def cut(self, repo_path: str, at: int, times: int = 1) -> None:
        """The next `times` downloads of `repo_path` stop after `at` bytes of their range."""
        self._cuts[repo_path] = _Cut(at, times)

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def cdn_url(self) -> str:
        assert self._httpd is not None
        return f"http://localhost:{self._httpd.server_address[1]}"

    # -- what was asked -------------------------------------------------------------------------
    def downloads(self) -> list[str]:
        """Repository paths whose bytes were sent (a GET of a file, one entry per response)."""
        with self._lock:
            return [s.repo_path for s in self.log if s.method == "GET" and s.repo_path and s.body_bytes
                    and s.status in (200, 206)]

    def bytes_sent(self) -> int:
        with self._lock:
            return sum(s.body_bytes for s in self.log if s.repo_path)

    def calls(self, kind: str) -> list[Served]:
        """Requests of one kind: "info", "tree", "resolve", "cdn"."""
        marks = {"info": "/api/datasets/", "tree": "/tree/", "resolve": "/resolve/", "cdn": "/cdn/"}
        with self._lock:
            found = [s for s in self.log if marks[kind] in s.path]
        if kind == "info":
            found = [s for s in found if "/tree/" not in s.path]
        return found

    def reset_log(self) -> None:
        with self._lock:
            self.log.clear()

    # -- answering ---------------------------------------------------------------------------
    def _etag(self, rev: Revision, path: str) -> str:
        file = rev.folder / path
        st = file.stat()
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)  # hard links: hashed once
        with self._lock:
            if key in self._hashes:
                return self._hashes[key]
        digest = hashlib.sha256(file.read_bytes()).hexdigest()
        with self._lock:
            self._hashes[key] = digest
        return digest

    @staticmethod
    def _is_lfs(path: str) -> bool:
        return path.lower().endswith(LFS_SUFFIXES)

    @staticmethod
    def _blob_id(rev: Revision, path: str) -> str:
        return hashlib.sha1(f"{rev.commit}:{path}:{rev.files[path]}".encode()).hexdigest()

    def _info_body(self, repo: Repo, rev: Revision, blobs: bool) -> bytes:
        """The info JSON of a revision (siblings with sizes when `blobs`), made once."""
        key = ("info", rev.commit, repo.repo_id, blobs, self.siblings_cap)
        with self._lock:
            if key in self._trees:
                return self._trees[key]
        siblings = []
        for p in list(rev.files)[:self.siblings_cap]:
            sibling: dict = {"rfilename": p}
            if blobs:
                sibling.update(size=rev.files[p], blobId=self._blob_id(rev, p))
                if self._is_lfs(p):
                    sibling["lfs"] = {"size": rev.files[p], "sha256": self._etag(rev, p), "pointerSize": 134}
            siblings.append(sibling)
        body = json.dumps({"_id": hashlib.sha1(repo.repo_id.encode()).hexdigest()[:24], "id": repo.repo_id,
                           "author": repo.repo_id.split("/")[0], "sha": rev.commit, "private": repo.private,
                           "gated": "auto" if repo.gated else False, "disabled": False,
                           "lastModified": "2026-01-01T00:00:00.000Z", "tags": [], "downloads": 0, "likes": 0,
                           "siblings": siblings}).encode()
        with self._lock:
            self._trees[key] = body
        return body

    def _tree(self, rev: Revision, path: str, recursive: bool) -> list[dict]:
        """The listing's entries, made once per (commit, folder, recursive): the Hub answers a
        page without walking the repository again."""
        key = (rev.commit, path, recursive)
        with self._lock:
            if key in self._trees:
                return self._trees[key]
        prefix = path + "/" if path else ""

        def wanted(p: str) -> bool:
            return p.startswith(prefix) and (recursive or "/" not in p[len(prefix):])

        entries = [{"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0, "path": d}
                   for d in sorted(rev.dirs()) if wanted(d)]
        for p, size in rev.files.items():
            if wanted(p):
                entry = {"type": "file", "oid": self._blob_id(rev, p), "size": size, "path": p}
                if self._is_lfs(p):
                    entry["lfs"] = {"oid": self._etag(rev, p), "size": size, "pointerSize": 134}
                entries.append(entry)
        with self._lock:
            self._trees[key] = entries
        return entries

    def __enter__(self) -> HubServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            # plumbing ------------------------------------------------------------------------
            def _record(self, status: int, nbytes: int, repo_path: str | None = None) -> None:
                with server._lock:
                    server.log.append(Served(self.command, urlsplit(self.path).path, status, nbytes, repo_path))

            def _send(self, status: int, body: bytes = b"", headers: dict | None = None,
                      ctype: str = "application/json", repo_path: str | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, str(v))
                self.end_headers()
                sent = 0 if self.command == "HEAD" else len(body)
                self._record(status, sent, repo_path)  # before the client can have read it
                if sent:
                    self.wfile.write(body)

            def _json(self, status: int, obj, headers: dict | None = None) -> None:
                self._send(status, json.dumps(obj).encode(), headers)

            def _error(self, status: int, code: str, message: str, headers: dict | None = None) -> None:
                self._json(status, {"error": message},
                           {"X-Error-Code": code, "X-Error-Message": message, **(headers or {})})

            def _token(self) -> str | None:
                auth = self.headers.get("Authorization") or ""
                return auth[7:].strip() if auth.startswith("Bearer ") else None

            def _repo(self, repo_id: str, *, files: bool) -> Repo | None:
                """The repo if this request may see it (else the error is sent)."""
                repo = server.repos.get(repo_id)
                token = self._token()
                if repo is None or (repo.private and token not in repo.tokens):
                    self._error(404 if token else 401, "RepoNotFound", "Repository not found")
                    return None
                if files and repo.gated and token not in repo.tokens:
                    if token:
                        self._error(403, "GatedRepo", f"Access to dataset {repo_id} is restricted and you "
                                    f"are not in the authorized list. Visit {server.url}/datasets/{repo_id} "
                                    "to ask for access.")
                    else:
                        self._error(401, "GatedRepo", f"Access to dataset {repo_id} is restricted. You must "
                                    "have access to it and be authenticated to access it. Please log in.")
                    return None
                return repo

            def _revision(self, repo: Repo, rev: str) -> Revision | None:
                found = repo.find(rev)
                if found is None:
                    self._error(404, "RevisionNotFound", f"Invalid rev id: {unquote(rev)}")
                return found

            # routes --------------------------------------------------------------------------
            def do_HEAD(self):
                self._route()

            def do_GET(self):
                self._route()

            def _route(self):
                if server.latency_s:
                    time.sleep(server.latency_s)
                url = urlsplit(self.path)
                parts = [unquote(p) for p in url.path.strip("/").split("/")]
                query = parse_qs(url.query)
                try:
                    if parts[:2] == ["api", "datasets"] and len(parts) >= 4:
                        repo_id = "/".join(parts[2:4])
                        rest = parts[4:]
                        if not rest or rest[0] == "revision":
                            return self._info(repo_id, rest[1] if len(rest) > 1 else "main",
                                              (query.get("blobs") or ["false"])[0].lower() == "true",
                                              query.get("expand"))
                        if rest[0] == "tree" and len(rest) >= 2:
                            return self._tree(repo_id, rest[1], "/".join(rest[2:]), query)
                    if parts[0] == "datasets" and len(parts) >= 6 and parts[3] == "resolve":
                        return self._resolve(f"{parts[1]}/{parts[2]}", parts[4], "/".join(parts[5:]))
                    if parts[0] == "cdn" and len(parts) >= 5:
                        return self._cdn(f"{parts[1]}/{parts[2]}", parts[3], "/".join(parts[4:]))
                    self._error(404, "NotFound", f"no such endpoint: {url.path}")
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _info(self, repo_id: str, rev: str, blobs: bool, expand: list[str] | None):
                repo = self._repo(repo_id, files=False)
                if repo is None:
                    return
                found = self._revision(repo, rev)
                if found is None:
                    return
                if expand:  # only what was asked for, as the Hub answers ?expand=
                    fields = {"sha": found.commit, "private": repo.private, "gated": "auto" if repo.gated else False}
                    return self._json(200, {"_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24], "id": repo_id,
                                            **{k: fields[k] for k in expand if k in fields}})
                self._send(200, server._info_body(repo, found, blobs))

            def _tree(self, repo_id: str, rev: str, path: str, query: dict):
                repo = self._repo(repo_id, files=False)
                if repo is None:
                    return
                found = self._revision(repo, rev)
                if found is None:
                    return
                dirs = found.dirs()
                if path and path not in dirs:
                    self._error(404, "EntryNotFound", f"{path} does not exist on {rev}",
                                {"X-Repo-Commit": found.commit})
                    return
                recursive = (query.get("recursive") or ["false"])[0].lower() == "true"
                entries = server._tree(found, path, recursive)
                start = int((query.get("cursor") or ["0"])[0])
                page = entries[start:start + server.page_size]
                headers = {}
                if start + server.page_size < len(entries):
                    q = f"recursive={str(recursive)}&expand=False&cursor={start + server.page_size}"
                    headers["Link"] = f'<{server.url}{urlsplit(self.path).path}?{q}>; rel="next"'
                self._json(200, page, headers)

            def _resolve(self, repo_id: str, rev: str, path: str):
                repo = self._repo(repo_id, files=True)
                if repo is None:
                    return
                found = self._revision(repo, rev)
                if found is None:
                    return
                if path not in found.files:
                    self._error(404, "EntryNotFound", "Entry not found", {"X-Repo-Commit": found.commit})
                    return
                size = found.files[path]
                common = {"X-Repo-Commit": found.commit, "Accept-Ranges": "bytes"}
                if server._is_lfs(path):
                    etag = server._etag(found, path)
                    # another origin, as the Hub's CDN is: the client stops at this 302 for the
                    # file's metadata and sends no token to it
                    location = f"{server.cdn_url}/cdn/{repo_id}/{found.commit}/{quote(path)}"
                    self.send_response(302)
                    for k, v in {**common, "Location": location, "X-Linked-Etag": f'"{etag}"',
                                 "X-Linked-Size": size, "ETag": f'"{server._blob_id(found, path)}"',
                                 "Content-Length": 0}.items():
                        self.send_header(k, str(v))
                    self._record(302, 0, path)
                    self.end_headers()
                    return
                self._file(found, path, {**common, "ETag": f'"{server._blob_id(found, path)}"'})

            def _cdn(self, repo_id: str, commit: str, path: str):
                repo = server.repos.get(repo_id)
                found = repo.find(commit) if repo else None
                if found is None or path not in found.files:
                    self._send(404, b"not found", ctype="text/plain")
                    return
                self._file(found, path, {"ETag": f'"{server._etag(found, path)}"', "Accept-Ranges": "bytes"})

            def _file(self, rev: Revision, path: str, headers: dict):
                data = (rev.folder / path).read_bytes()
                start = 0
                rng = self.headers.get("Range")
                status = 200
                if rng and rng.startswith("bytes="):
                    first = rng[6:].split("-")[0]
                    start = int(first) if first else 0
                    status = 206
                    headers = {**headers, "Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"}
                body = data[start:]
                if self.command == "HEAD" or status == 200 and not body and not data:
                    self._send(status, body, headers, ctype="application/octet-stream", repo_path=path)
                    return
                cut = server._cuts.get(path)
                with server._lock:
                    active = cut is not None and cut.times > 0
                    if active:
                        cut.times -= 1
                if not active:
                    self._send(status, body, headers, ctype="application/octet-stream", repo_path=path)
                    return
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                for k, v in headers.items():
                    self.send_header(k, str(v))
                self.end_headers()
                part = body[:max(0, cut.at - start)] if start < cut.at else b""
                self._record(status, len(part), path)
                self.wfile.write(part)
                self.wfile.flush()
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


def hub_env(monkeypatch, server: HubServer, tmp: Path, *, token: str | None = None) -> dict[str, str]:
    """Point the real huggingface_hub client (and the app's data source) at `server`, with a fresh
    Hub cache, app cache and mirror folder under `tmp`, online (the test suite runs with
    HF_HUB_OFFLINE=1, which huggingface_hub reads at import: its flag is switched off here)."""
    from huggingface_hub import constants

    env = {"HF_ENDPOINT": server.url, "HF_HUB_CACHE": str(tmp / "hf-cache"),
           "APP_CACHE_DIR": str(tmp / "app-cache"), "APP_HUB_MIRROR_DIR": str(tmp / "mirrors"),
           "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_XET": "1"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if token:
        monkeypatch.setenv("HF_TOKEN", token)
    else:
        monkeypatch.delenv("HF_TOKEN", raising=False)
        monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True, raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp / "no-token"), raising=False)
    forget_all()
    return env


def offline(monkeypatch) -> None:
    """HF_HUB_OFFLINE=1 as huggingface_hub sees it (its flag and the environment)."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    forget_all()
