"""A visitor's own copy of a movie's character memory: edits (add / remove a reference, names,
model-built references) go to a copy in a per-session folder, never to the shared file, unless
the app runs with APP_ADMIN=1 (components.base.admin). Pure file work; no gradio."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from components.base.admin import admin_mode
from components.window_search.memory import CharacterMemory, load_or_empty
from components.window_search.ui.session import MovieInfo, WindowSearchResources

PREFIX = "ws-session-memory-"


def editable_memory(info: MovieInfo, res: WindowSearchResources) -> CharacterMemory:
    """The memory an edit may change: the shared one in admin mode, else the session's copy
    (made on the first edit: the JSON and its reference images, so the copy owns its files)."""
    if admin_mode() or info.memory_private:
        return load_or_empty(info.memory, info.movie_id)
    shared = load_or_empty(info.memory, info.movie_id)
    folder = Path(tempfile.mkdtemp(prefix=PREFIX))
    res.folders.append(folder)
    images = folder / info.movie_id
    images.mkdir()
    for ch in shared.characters:
        for ref in ch.references:
            src = Path(ref.image)
            if src.is_file():
                dst = images / f"{ref.ref_id.replace(':', '_')}{src.suffix}"
                shutil.copyfile(src, dst)
                ref.image = str(dst)
    shared.save(folder / f"{info.movie_id}.json")
    info.memory, info.memory_private = str(folder / f"{info.movie_id}.json"), True
    return load_or_empty(info.memory, info.movie_id)
