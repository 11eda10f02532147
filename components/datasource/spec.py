"""`hf://datasets/<owner>/<name>[@revision][/subfolder]`: a dataset repository (or a folder of
it) named where a data folder is accepted. The revision ends at the next `/`; a revision that
holds one (`refs/pr/1`) is written with `%2F`, as HfFileSystem writes it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

from components.base.errors import UserError

PREFIX = "hf://"
FORM = "hf://datasets/<owner>/<name>[@revision][/subfolder]"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class HubSpec:
    repo_id: str              # owner/name
    revision: str | None      # as asked (None: the default branch)
    subfolder: str = ""       # a folder (or file) path inside the repository, "" for its root

    def __str__(self) -> str:
        rev = f"@{quote(self.revision, safe='')}" if self.revision else ""
        sub = f"/{self.subfolder}" if self.subfolder else ""
        return f"{PREFIX}datasets/{self.repo_id}{rev}{sub}"

    def at(self, revision: str | None = None, subfolder: str | None = None) -> HubSpec:
        """The same repository at another revision and/or folder."""
        return HubSpec(self.repo_id, self.revision if revision is None else revision,
                       self.subfolder if subfolder is None else subfolder)

    @property
    def pinned(self) -> bool:
        return bool(self.revision and COMMIT.fullmatch(self.revision))


def is_hub_spec(value: object) -> bool:
    """True for a string naming a repository (`hf://...`); a Path never is one."""
    return isinstance(value, str) and value.strip().startswith(PREFIX)


def parse_spec(text: str) -> HubSpec:
    """The spec's parts, or one UserError line saying what the form is."""
    raw = str(text).strip()
    if not raw.startswith(PREFIX):
        raise UserError(f"{raw!r} is not a dataset repository; write {FORM}.")
    parts = raw[len(PREFIX):].strip("/").split("/")
    if len(parts) < 3 or parts[0] != "datasets":
        raise UserError(f"{raw!r}: only dataset repositories can hold benchmark data; write {FORM} "
                        "(e.g. hf://datasets/CedPei/TempCloze).")
    owner, name_rev, rest = parts[1], parts[2], parts[3:]
    name, _, revision = name_rev.partition("@")
    if not (_NAME.fullmatch(owner) and _NAME.fullmatch(name)):
        raise UserError(f"{raw!r}: '{owner}/{name}' is not a repository name (letters, digits, "
                        f"'-', '_', '.'); write {FORM}.")
    if "@" in name_rev and not revision:
        raise UserError(f"{raw!r}: nothing after '@'; give a branch, tag or commit, or leave '@' out.")
    sub = "/".join(p for p in rest if p)
    if any(p in (".", "..") for p in rest):
        raise UserError(f"{raw!r}: the subfolder may not contain '.' or '..'.")
    return HubSpec(f"{owner}/{name}", unquote(revision) if revision else None, sub)


def as_source(value: str | Path) -> str | Path:
    """argparse-friendly: a spec stays a string, anything else becomes a Path."""
    return value.strip() if is_hub_spec(value) else Path(value)
