"""What a run's answers depend on, as the stamp written into every record of its output
(components/common/batch.py refuses a resume whose stamp differs, naming both values; a file with
no stamp is resumed only with --adopt). docs/formats.md "Run stamps" lists every field:

- the app version (components/base/version.py);
- the data: its Hub revision (`data_revision`, hf://...@<commit>), or for a local folder
  `data_fingerprint`, a hash of its annotation files' bytes and its stem list (names only, so a
  moved or copied folder keeps it; another folder's data does not);
- the backend and what shapes its requests: `max_images` (images one request may carry), and for
  an API backend `image_max_side` (pixels of a sent frame's longer side) and `thinking_control`;
- each tab's own settings (its run command names them)."""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from backends.base import VLMBackend
from backends.images import api_image_max_side
from components import datasource
from components.base.version import APP_VERSION

#: stamp keys that hold the data's identity
DATA_KEYS = ("data_revision", "data_fingerprint")


def data_fingerprint(files: Iterable[str | Path], stems: Iterable[str]) -> str:
    """sha256 over each annotation file's name and bytes (sorted by name; a missing file counts
    as absent) and the sorted stem list: `sha256:<16 hex>`."""
    digest = hashlib.sha256()
    for path in sorted({Path(p) for p in files}, key=lambda p: (p.name, str(p))):
        digest.update(path.name.encode("utf-8") + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"(absent)")
        digest.update(b"\0")
    digest.update("\n".join(sorted(map(str, stems))).encode("utf-8"))
    return "sha256:" + digest.hexdigest()[:16]


def data_stamp(source: str | Path, files: Iterable[str | Path], stems: Iterable[str]) -> dict[str, str | None]:
    """{"data_revision": hf://...@<commit>} for data from a repository, else {"data_revision": None,
    "data_fingerprint": ...} for a local folder (`data_fingerprint`)."""
    revision = datasource.data_revision(source)
    if revision:
        return {"data_revision": revision}
    return {"data_revision": None, "data_fingerprint": data_fingerprint(files, stems)}


def backend_stamp(backend: VLMBackend, role: str = "backend") -> dict[str, str]:
    """The backend (under `role`) and the settings that shape its requests."""
    out = {role: backend.backend_id}
    prefix = "" if role == "backend" else f"{role}_"
    # always there ("none": no cap), so a resume that sets a cap is told apart from a file without a stamp
    out[f"{prefix}max_images"] = "none" if backend.max_images is None else str(backend.max_images)
    if getattr(backend, "kind", "") == "openai":
        out[f"{prefix}image_max_side"] = str(api_image_max_side())
        control = getattr(backend, "thinking_control", None)
        if control:
            out[f"{prefix}thinking_control"] = str(control)
    return out


def settings_stamp(**settings: object) -> dict[str, str]:
    """The app version and a tab's own settings, each as text (None: left out)."""
    return {"app_version": APP_VERSION, **{k: _text(v) for k, v in settings.items() if v is not None}}


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
