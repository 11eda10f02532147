"""A mount answers file questions from its listing until a file is fetched, then from the disk;
the local files the app writes in a mirror are seen beside the listing."""
from __future__ import annotations

import os

from components.datasource import mounts
from components.datasource.mounts import Index, Mount


def test_index_knows_every_folder_of_its_files():
    index = Index({"choices/a/GT.mp4": 5, "choices/a/S/Rand1.mp4": 3, "meta.json": 2})
    assert index.is_dir("") and index.is_dir("choices") and index.is_dir("choices/a/S")
    assert not index.is_dir("choices/a/GT.mp4") and index.is_file("choices/a/GT.mp4")
    assert index.entries("choices/a") == {"GT.mp4": 5, "S": None}
    assert index.entries("") == {"choices": None, "meta.json": 2}
    assert index.total_bytes() == 10


def test_local_fetches_once_and_links_the_file_at_its_place(tmp_path):
    blob = tmp_path / "cache" / "blob"
    blob.parent.mkdir()
    blob.write_bytes(b"12345")
    asked = []

    def fetch(rel):
        asked.append(rel)
        return str(blob)

    root = tmp_path / "mirror"
    mounts.add_mount(Mount(str(root), Index({"choices/a/GT.mp4": 5}), fetch, "hf://datasets/o/n@" + "c" * 40))
    try:
        clip = root / "choices" / "a" / "GT.mp4"
        assert not clip.exists() and mounts.is_file(clip) and mounts.size(clip) == 5
        assert mounts.entries(root / "choices") == {"a": None}
        assert mounts.local(clip) == clip and clip.read_bytes() == b"12345"
        assert os.path.islink(clip) and asked == ["choices/a/GT.mp4"]
        mounts.local(clip)
        assert asked == ["choices/a/GT.mp4"]          # a fetched file is a local file
        (root / "runs").mkdir()
        (root / "runs" / "r.json").write_text("{}")   # what the app writes beside the repository's files
        assert mounts.entries(root) == {"choices": None, "runs": None}
        assert mounts.is_file(root / "runs" / "r.json")
        assert mounts.source_of(clip) == "hf://datasets/o/n@" + "c" * 40
        assert mounts.source_of(root / "runs" / "r.json") is None
        missing = root / "choices" / "a" / "Wide.mp4"
        assert mounts.local(missing) == missing and not missing.exists() and asked == ["choices/a/GT.mp4"]
    finally:
        mounts.remove_mounts(root)


def test_glob_reads_the_listing(tmp_path):
    root = tmp_path / "m"
    mounts.add_mount(Mount(str(root), Index({"output/p1/meta.json": 1, "output/p2/meta.json": 1, "meta.json": 1,
                                            "output/p2/x.txt": 1}), lambda rel: "", "s"))
    try:
        assert [p.relative_to(root).as_posix() for p in mounts.glob(root, "output/*/meta.json")] == \
            ["output/p1/meta.json", "output/p2/meta.json"]
        assert mounts.glob(root, "meta.json") == [root / "meta.json"]
    finally:
        mounts.remove_mounts(root)
