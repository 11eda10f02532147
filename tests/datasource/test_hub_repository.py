"""A dataset repository opened through the real huggingface_hub client, against the local Hub
server (tests/helpers/hub_server.py) serving the example TempCloze data: what opening it asks of
the Hub, what showing a question downloads, and every failure's one line."""
from __future__ import annotations

import os

import pytest

from components.cloze.data import clip_relpath, load_dataset, shared_dataset
from components.cloze.frames import clip_grids
from components.cloze.questions import build_set
from components.datasource import DataSourceError, data_revision, local, open_data_dir
from components.datasource import hub as hub_module
from components.datasource.repos import forget_all
from tests.datasource.conftest import copy_tree
from tests.helpers.hub_server import GOOD_TOKEN, offline


def _repo_files(hub, repo="test/tempcloze", rev="main"):
    return hub.repos[repo].revisions[rev].files


@pytest.mark.parametrize("listing", ["info", "tree"])
def test_opening_lists_once_and_downloads_no_media(hub, cloze_repo, monkeypatch, listing):
    """One listing: the repository's info with its files' sizes (one request), or, for a repository
    larger than the Hub lists there, the tree's pages, each asked once."""
    if listing == "tree":
        monkeypatch.setattr(hub_module, "SIBLINGS_CAP", 10)
        hub.siblings_cap = 10
    hub.page_size = 7  # many pages, as the Hub's 1,000 entries a page are for a real benchmark
    files = _repo_files(hub)
    root = open_data_dir(cloze_repo)
    ds = load_dataset(cloze_repo)
    qs = build_set(ds, "all", ("S", "A", "C"))
    entries = len(files) + len({"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)})
    if listing == "info":
        assert len(hub.calls("tree")) == 0 and len(hub.calls("info")) == 2   # the commit, the files
    else:
        assert len(hub.calls("tree")) == -(-entries // 7) and len(hub.calls("info")) == 2
    assert sorted(ds.instances) == sorted({p.split("/")[1] for p in files if p.startswith("choices/")})
    assert len(qs.questions) == 3 * len(ds.instances) and not qs.skipped
    assert hub.downloads() and all(p.endswith(".json") for p in hub.downloads())   # meta, sets: no clip
    assert ds.root == root / "cloze"
    # the same repository again in this process: nothing asked of the Hub
    hub.reset_log()
    assert shared_dataset(cloze_repo).instances.keys() == ds.instances.keys()
    assert hub.log == []


def test_showing_question_n_downloads_exactly_its_clips(hub, cloze_repo):
    ds = load_dataset(cloze_repo)
    q = build_set(ds, "all", ("S", "A", "C")).questions[4]
    hub.reset_log()
    inst = ds.instance(q.stem)
    grids = clip_grids([inst.clip_path(n) for n in ("before", "after", *q.options)])
    assert len(grids) == 6
    expected = {f"choices/{q.stem}/{clip_relpath(n)}" for n in ("before", "after", *q.options)}
    assert sorted(hub.downloads()) == sorted(expected)           # each once, and nothing else
    for name in ("before", "after", *q.options):                 # the bytes are the repository's
        original = hub.repos["test/tempcloze"].revisions["main"].folder / "choices" / q.stem / clip_relpath(name)
        assert inst.clip_path(name).read_bytes() == original.read_bytes()


def test_a_restart_lists_nothing_and_offline_reads_the_cache(hub, cloze_repo, monkeypatch):
    ds = load_dataset(cloze_repo)
    q0, q1 = _two_stems(ds)
    inst = ds.instance(q0.stem)
    clip_grids([inst.clip_path(n) for n in ("before", "after", *q0.options)])
    forget_all()                                                  # a new process
    hub.reset_log()
    load_dataset(cloze_repo)
    assert len(hub.calls("info")) == 1                            # the commit; its listing was kept
    offline(monkeypatch)
    hub.reset_log()
    ds = load_dataset(cloze_repo)                                 # commit from the cache's refs
    inst = ds.instance(q0.stem)
    assert len(clip_grids([inst.clip_path(n) for n in ("before", "after", *q0.options)])) == 6
    assert hub.log == []                                          # not one request
    other = ds.instance(q1.stem)
    with pytest.raises(DataSourceError) as info:
        clip_grids([other.clip_path("before")])
    message = str(info.value)
    assert "HF_HUB_OFFLINE=1" in message and f"choices/{q1.stem}/before.mp4" in message
    assert "app.py fetch" in message and "\n" not in message


def _two_stems(ds):
    qs = build_set(ds, "all", ("S",)).questions
    return qs[0], next(q for q in qs if q.stem != qs[0].stem)


def test_a_gated_repository_says_where_to_accept_its_terms(hub, cloze_examples, tmp_path, monkeypatch):
    hub.add_repo("test/gated", copy_tree(cloze_examples, tmp_path / "gated"), gated=True)
    with pytest.raises(DataSourceError) as info:
        load_dataset("hf://datasets/test/gated")
    message = str(info.value)
    assert "hf://datasets/test/gated is gated" in message and f"{hub.url}/datasets/test/gated" in message
    assert "HF_TOKEN" in message and "meta.json" in message and "\n" not in message
    monkeypatch.setenv("HF_TOKEN", "hf_not_granted")
    forget_all()
    with pytest.raises(DataSourceError) as info:
        load_dataset("hf://datasets/test/gated")
    assert "has not been granted access" in str(info.value) and "hf_not_granted" not in str(info.value)
    monkeypatch.setenv("HF_TOKEN", GOOD_TOKEN)
    forget_all()
    assert load_dataset("hf://datasets/test/gated").instances


def test_private_missing_repo_missing_revision_and_foreign_layout(hub, cloze_examples, tmp_path, monkeypatch):
    hub.add_repo("test/private", copy_tree(cloze_examples, tmp_path / "private"), private=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("not a benchmark")
    hub.add_repo("test/other", tmp_path / "other")
    cases = {"hf://datasets/test/private": ("was not found", "private dataset needs HF_TOKEN"),
             "hf://datasets/test/nothing": ("hf://datasets/test/nothing was not found", "HF_TOKEN"),
             "hf://datasets/test/private@v9": ("was not found", "HF_TOKEN"),
             "hf://datasets/test/other": ("none of the layouts", "notes.txt"),
             "hf://datasets/test/other/deeper": ("has no folder or file 'deeper'", "/tree/")}
    for spec, words in cases.items():
        with pytest.raises(DataSourceError) as info:
            open_data_dir(spec)
        assert all(w in str(info.value) for w in words) and "\n" not in str(info.value), (spec, str(info.value))
    monkeypatch.setenv("HF_TOKEN", GOOD_TOKEN)
    forget_all()
    with pytest.raises(DataSourceError) as info:
        open_data_dir("hf://datasets/test/private@v9")
    assert "has no revision 'v9'" in str(info.value)
    assert load_dataset("hf://datasets/test/private").instances


def test_a_connection_cut_mid_file_is_resumed_or_reported_and_never_half_read(hub, cloze_repo):
    ds = load_dataset(cloze_repo)
    inst = next(iter(ds.instances.values()))
    name = f"choices/{inst.stem}/GT.mp4"
    original = (hub.repos["test/tempcloze"].revisions["main"].folder / name).read_bytes()
    hub.cut(name, at=len(original) // 2, times=1)                 # once: the client resumes the range
    assert local(inst.clip_path("GT")).read_bytes() == original
    assert hub.downloads().count(name) == 2

    name = f"choices/{inst.stem}/after.mp4"
    hub.cut(name, at=1000, times=100)                             # for good: retried, then one line
    with pytest.raises(DataSourceError) as info:
        local(inst.clip_path("after"))
    message = str(info.value)
    assert f"Could not download {name}" in message and "run again" in message and "\n" not in message
    assert not os.path.lexists(inst.clip_path("after"))           # nothing at its place
    cache = os.environ["HF_HUB_CACHE"]
    leftovers = [f for _, _, names in os.walk(cache) for f in names if f.endswith(".incomplete")]
    blobs = [os.path.join(b, f) for b, _, names in os.walk(cache) if b.endswith("blobs") for f in names]
    assert leftovers == [] and all(os.path.getsize(b) != 1000 for b in blobs)


def test_pinned_spec_and_a_new_commit_of_the_branch(hub, cloze_examples, tmp_path):
    first = copy_tree(cloze_examples, tmp_path / "v1")
    hub.add_repo("test/moving", first)
    ds = load_dataset("hf://datasets/test/moving")
    inst = next(iter(ds.instances.values()))
    old = hub.repo_commits("test/moving")["main"]
    assert data_revision(ds.root) == f"hf://datasets/test/moving@{old}"
    local(inst.clip_path("GT"))
    answers = open_data_dir("hf://datasets/test/moving") / "cloze" / "human_study"
    answers.mkdir(parents=True)
    (answers / "ann.jsonl").write_text('{"answer": "A"}\n')       # what the app wrote in the mirror
    second = copy_tree(cloze_examples, tmp_path / "v2")
    (second / "choices" / inst.stem / "GT.mp4").write_bytes(b"changed")
    hub.add_repo("test/moving", {"main": second, "v1": first})
    forget_all()                                                  # a restart after the push
    ds = load_dataset("hf://datasets/test/moving")
    new = hub.repo_commits("test/moving")["main"]
    assert new != old and data_revision(ds.root) == f"hf://datasets/test/moving@{new}"
    assert not os.path.lexists(ds.instance(inst.stem).clip_path("GT"))   # the old commit's link is gone
    assert local(ds.instance(inst.stem).clip_path("GT")).read_bytes() == b"changed"
    assert (answers / "ann.jsonl").read_text() == '{"answer": "A"}\n'   # the app's own files stay
    hub.reset_log()
    pinned = load_dataset(f"hf://datasets/test/moving@{old}")
    assert hub.calls("info") == []                                # a commit needs no resolving
    assert local(pinned.instance(inst.stem).clip_path("GT")).read_bytes() != b"changed"
