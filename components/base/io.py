"""Durable files, the one module every tab writes through.

- `atomic_write*`: write a temp file beside the target, fsync it, rename it over the target, fsync
  the folder. Readers see the old file or the new one, never a partial one. The temp name is unique
  per call (process and thread), so two writers of one path never share a temp file. Every file
  the app writes whole goes through these (or `atomic_temp_path` + `commit_temp` for a writer that
  needs a file name, `atomic_symlink` for a link); `durable=False` for caches.
- `append_jsonl`: one JSON line, flushed and fsynced before returning; a file whose last line was
  torn (power loss, full disk) is first ended with a newline, so the new line stays readable.
  `append_lines` the same for lines kept as they came (a torn or repeated line moved aside);
  `JsonlAppender` the same for one writer of many lines, the file kept open.
- `read_jsonl`: every readable line, skipping blank and torn ones.
- `repair_torn_tail`: before a resume, a torn last line is moved to `<file>.torn` and cut, so the
  item is redone and the file stays readable by the strict loaders of `eval`.
- `path_lock(path)`: one in-process lock per resolved path, for read-modify-write sequences.
- `output_lock(path)`: one writer of an output at a time across processes (`<file>.lock` beside
  the file the path resolves to, so a symlink or `..` cannot take a second lock; an advisory lock
  that the system drops when its holder exits, however it exits); a second writer is refused,
  naming the process that holds it.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO
from collections.abc import Callable

from components.base.errors import DataFormatError, UserError

#: permissions of files the app writes (mkstemp alone would leave 0600)
FILE_MODE = 0o644

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def path_lock(path: str | Path) -> threading.Lock:
    """The process-wide lock for `path` (the same object for every spelling of the path)."""
    key = os.path.realpath(path)
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


#: (lock file, thread) -> how many times output_lock is held there (re-entrant per thread)
_held: dict[tuple[str, int], int] = {}


def real_path(path: str | Path) -> Path:
    """`path` with every symlink and `..` resolved (as far as it exists): the one name of the file
    that two spellings of it (a link, `a/../b`) share."""
    return Path(os.path.realpath(path))


def lock_path(path: str | Path) -> Path:
    """The file `output_lock` locks for `path`: beside the file the path resolves to (symlinks and
    `..` followed), so two spellings of one output take one lock; kept: removing it would let two
    writers lock two different files. Two paths into one folder through a bind mount name the same
    lock file (the same inode), which flock sees as one."""
    path = real_path(path)
    return path.with_name(path.name + ".lock")


@contextlib.contextmanager
def output_lock(path: str | Path) -> Iterator[None]:
    """Hold `<path>.lock` for the block, or raise UserError naming the process holding it. The
    same thread may nest it; another thread or process is refused."""
    import fcntl

    target = lock_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    key = (os.path.realpath(target), threading.get_ident())
    with _locks_guard:
        if _held.get(key):
            _held[key] += 1
            nested = True
        else:
            nested = False
    if nested:
        try:
            yield
        finally:
            with _locks_guard:
                _held[key] -= 1
        return
    fd = os.open(target, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            raise UserError(f"{path} is being written by another run (process {holder}, lock "
                            f"{target}); wait for it to finish, or write to another output "
                            "file.") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        with _locks_guard:
            _held[key] = 1
        try:
            yield
        finally:
            with _locks_guard:
                _held.pop(key, None)
    finally:
        os.close(fd)  # drops the lock


def fsync_dir(folder: str | Path) -> None:
    """Make a create or rename in `folder` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | Path, write: Callable[[BinaryIO], Any], *, mode: int = FILE_MODE,
                 durable: bool = True) -> Path:
    """Call `write(fh)` on a temp file in the target's folder, then rename it over `path`.
    `durable=False` skips the fsyncs, for a file whose loss in a power cut only costs a convenience
    (a reader must then accept an empty or missing file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir(path.parent)
    return path


def atomic_write_bytes(path: str | Path, data: bytes, *, durable: bool = True) -> Path:
    return atomic_write(path, lambda fh: fh.write(data), durable=durable)


def atomic_write_text(path: str | Path, text: str, *, durable: bool = True) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def atomic_write_json(path: str | Path, obj: Any, *, indent: int | None = 1, durable: bool = True) -> Path:
    data = (json.dumps(obj, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")
    return atomic_write_bytes(path, data, durable=durable)


def atomic_write_jsonl(path: str | Path, records: list[dict]) -> Path:
    return atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def atomic_temp_path(path: str | Path) -> Path:
    """A fresh, unique temp path beside `path` (same suffix) for writers that need a file name
    (an encoder, a mesh writer); finish with `os.replace(tmp, path)` or `commit_temp`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(fd)
    return Path(tmp)


def commit_temp(tmp: str | Path, path: str | Path, *, mode: int = FILE_MODE) -> Path:
    """Rename a finished temp file (from `atomic_temp_path`) over `path`, durably."""
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    fsync_dir(Path(path).parent)
    return Path(path)


#: the ending of `atomic_symlink`'s temp names (a folder listing leaves them out)
LINK_TEMP_SUFFIX = ".link"


def atomic_symlink(target: str | Path, path: str | Path) -> Path:
    """`path` made a symbolic link to `target` in one step (a link made under a unique temp name
    beside it, renamed over it), or a copy of `target` where links are not allowed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.urandom(6).hex()}{LINK_TEMP_SUFFIX}")
    try:
        try:
            os.symlink(target, tmp)
        except OSError:
            shutil.copyfile(target, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    return path


def append_jsonl(path: str | Path, record: dict, *, lock: threading.Lock | None = None) -> None:
    """Append one JSON line and make it durable before returning (see the module docstring)."""
    append_lines(path, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"), lock=lock)


def append_lines(path: str | Path, data: bytes, *, lock: threading.Lock | None = None) -> None:
    """Append whole lines (`data` ends with a newline) and make them durable before returning; a
    file whose last line was torn is first ended with a newline, so the new lines stay readable.
    For lines kept as they came (a torn or repeated line moved aside) as for `append_jsonl`'s."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with lock or path_lock(path):
        created = not path.exists()
        with open(path, "ab") as fh:
            if not created and fh.tell() > 0 and _last_byte(path) != b"\n":
                data = b"\n" + data  # end a torn last line first
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if created:
            os.chmod(path, FILE_MODE)
            fsync_dir(path.parent)


class JsonlAppender:
    """`append_jsonl` for one writer appending many lines to one file (a batch run, which holds
    the file's `output_lock`): the file is opened at the first line and kept open, and each line
    is written and fsynced before `append` returns (two system calls a line, not ~13: a batch
    run at high concurrency hands its GIL over on each). Thread-safe: lines are written whole
    one at a time, and each caller's fsync (outside the lock) makes its own line durable, and
    those written before it, so threads appending at once share the disk's flushes. A torn last
    line is ended first, as by `append_jsonl`. Use as a context manager; closed at its end."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._fd: int | None = None
        self._ended = True
        self._lock = threading.Lock()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        if created:
            os.chmod(self.path, FILE_MODE)
            fsync_dir(self.path.parent)
        self._ended = os.fstat(fd).st_size == 0 or _last_byte(self.path) == b"\n"
        self._fd = fd
        return fd

    def append(self, record: dict) -> None:
        data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            fd = self._fd if self._fd is not None else self._open()
            if not self._ended:
                data = b"\n" + data  # end a torn last line first
            self._ended = False       # until the whole line is written
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            self._ended = True
        os.fsync(fd)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def torn_path(path: str | Path) -> Path:
    """Where `repair_torn_tail` keeps the bytes of a torn last line (beside the file)."""
    path = Path(path)
    return path.with_name(path.name + ".torn")


def repair_torn_tail(path: str | Path) -> int:
    """End a JSONL file cleanly before it is resumed. A last line without its newline that still
    reads as JSON (the newline alone was lost) is kept and ended; one that does not (the write was
    cut mid-record) is appended to `<file>.torn` and cut from the file, so the item is redone and
    the file stays readable. Never touches a complete line. Returns the bytes moved aside."""
    path = Path(path)
    with path_lock(path):
        if not path.exists() or path.stat().st_size == 0 or _last_byte(path) == b"\n":
            return 0
        with open(path, "rb+") as fh:
            size = fh.seek(0, os.SEEK_END)
            span = 1 << 16
            while True:  # the start of the last line, without reading the whole file
                start = max(0, size - span)
                fh.seek(start)
                cut = fh.read(size - start).rfind(b"\n")
                if cut >= 0 or start == 0:
                    break
                span *= 4
            tail_start = start + cut + 1 if cut >= 0 else 0
            fh.seek(tail_start)
            tail = fh.read()
            try:
                json.loads(tail.decode("utf-8"))
                whole = True
            except (UnicodeDecodeError, json.JSONDecodeError):
                whole = False
            if whole:
                fh.seek(0, os.SEEK_END)
                fh.write(b"\n")
                fh.flush()
                os.fsync(fh.fileno())
                return 0
            with open(torn_path(path), "ab") as aside:
                aside.write(tail + b"\n")
                aside.flush()
                os.fsync(aside.fileno())
            fh.truncate(tail_start)
            fh.flush()
            os.fsync(fh.fileno())
        return len(tail)


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1)


def read_jsonl(path: str | Path) -> list[dict]:
    """Every readable line of a JSONL file, ignoring blank lines and torn or undecodable ones."""
    path = Path(path)
    if not path.exists():
        return []
    records = []
    with open(path, encoding="utf-8", errors="replace") as fh:  # undecodable lines fail json below
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return records


class _DuplicateKey(Exception):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


def duplicate_key_line(text: str) -> tuple[int, str] | None:
    """(line, key) of the first key that repeats inside one JSON object of `text` (valid JSON),
    found by a walk that tracks strings and nesting; None when every object's keys are unique."""
    stack: list[set[str] | None] = []  # per open container: its keys so far (None: an array)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if end >= n:  # the text after the duplicate need not be valid JSON
                return None
            j = end + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if stack and stack[-1] is not None and j < n and text[j] == ":":
                key = json.loads(text[i:end + 1])
                if key in stack[-1]:
                    return text.count("\n", 0, i) + 1, key
                stack[-1].add(key)
            i = end + 1
            continue
        if ch == "{":
            stack.append(set())
        elif ch == "[":
            stack.append(None)
        elif ch in "]}":
            stack.pop()
        i += 1
    return None


def load_json(path: str | Path, what: str = "file") -> Any:
    """Read JSON with a clear DataFormatError for missing or malformed files. A key given twice in
    one object is refused, naming its line: json keeps the last copy silently, and in a result
    file that is a different score (a stem answered twice)."""
    path = Path(path)
    if not path.exists():
        raise DataFormatError(f"{what} not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except _DuplicateKey as exc:
        found = duplicate_key_line(text)
        line, key = found if found else (None, exc.key)
        where = f"line {line}: " if line else ""
        raise DataFormatError(f"{path}: {where}key '{key}' appears twice in one object; JSON keeps only "
                              "the last copy, so remove the one that should not count.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataFormatError(f"{path} is not valid JSON ({exc})") from None
    except OSError as exc:  # a folder, or no permission
        raise DataFormatError(f"{what} {path} cannot be read ({exc.strerror}); give a JSON file.") from None
