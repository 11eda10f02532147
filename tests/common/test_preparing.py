"""The data prepared while the server answers (components/common/preparing.py): a part found on
disk is ready at once and never rebuilt; a missing part is built by a child process, one part at
a time in the build order, its fraction readable while it builds; a failure is one line; a
repository opens in the background. The child here is a small script standing in for
examples/generate.py (whose own part placement is tested below), so no test waits for drawing."""
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from components.common import preparing
from components.common.preparing import FAILED, READY, Preparation, build_order, parts
from examples import generate

#: writes progress 0.5, waits for a go-file, then writes the part (or fails for part "impact"
#: when FAIL_IMPACT is in its arguments)
CHILD = textwrap.dedent("""
    import json, os, sys, time
    root, part, progress, go = sys.argv[1:5]
    with open(progress, "w") as f:
        json.dump({"part": part, "fraction": 0.5}, f)
    while not os.path.exists(go):
        time.sleep(0.01)
    if part == "impact" and "FAIL_IMPACT" in sys.argv:
        sys.exit(3)
    target = os.path.join(root, part)
    os.makedirs(os.path.join(target, "choices") if part == "cloze" else target, exist_ok=True)
    if part != "cloze":
        open(os.path.join(target, "annotations.json"), "w").write("{}")
    open(os.path.join(target, ".complete"), "w").write("ok")
    with open(os.path.join(root, "order.txt"), "a") as f:
        f.write(part + "\\n")
""")


def _command(go: Path, *extra: str):
    def command(part: str, root: Path, progress: Path) -> list[str]:
        return [sys.executable, "-c", CHILD, str(root), part, str(progress), str(go), *extra]
    return command


def _wait_for(predicate, timeout=30.0):
    import time
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def test_missing_parts_are_built_one_at_a_time_with_their_progress(tmp_path):
    BUILD_ORDER, PARTS = build_order(), parts()
    assert BUILD_ORDER == ("grounding", "impact", "cloze")   # the first tab's, then the quickest first
    go = tmp_path / "go"
    prep = Preparation(tmp_path / "data", examples=True, command=_command(go)).start()
    assert _wait_for(lambda: prep.status(BUILD_ORDER[0]).state == "building"
                     and prep.status(BUILD_ORDER[0]).fraction == 0.5)
    first = prep.status(BUILD_ORDER[0])
    assert first.waiting and "Building the example data" in first.message and first.source == "examples"
    assert all(prep.status(p).state == "queued" for p in BUILD_ORDER[1:])
    assert not (tmp_path / "data" / BUILD_ORDER[0] / ".complete").exists()
    go.write_text("go")
    assert prep.wait(60)
    assert all(prep.status(p).state == READY and prep.status(p).fraction == 1.0 for p in PARTS)
    assert (tmp_path / "data" / "order.txt").read_text().split() == list(BUILD_ORDER)

    # a restart: everything on disk is ready, and nothing is built again
    again = Preparation(tmp_path / "data", examples=True, command=_command(tmp_path / "never")).start()
    assert again.wait(10)
    assert all(again.status(p).state == READY for p in PARTS)
    assert (tmp_path / "data" / "order.txt").read_text().split() == list(BUILD_ORDER)


def test_a_failed_part_says_so_in_one_line_and_the_others_are_built(tmp_path):
    go = tmp_path / "go"
    go.write_text("go")
    prep = Preparation(tmp_path / "data", examples=True, command=_command(go, "FAIL_IMPACT")).start()
    assert prep.wait(60)
    failed = prep.status("impact")
    assert failed.state == FAILED and "exit status 3" in failed.message and "\n" not in failed.message
    assert prep.status("cloze").ready and prep.status("grounding").ready


def test_without_examples_a_missing_part_is_absent(tmp_path):
    (tmp_path / "data" / "impact").mkdir(parents=True)
    (tmp_path / "data" / "impact" / "annotations.json").write_text("{}")
    prep = Preparation(tmp_path / "data", examples=False, command=_command(tmp_path / "never")).start()
    assert prep.wait(10)
    assert prep.status("impact").ready and prep.status("impact").source == "folder"
    assert prep.status("cloze").state == "absent" and "No Cloze data" in prep.status("cloze").message


def test_a_repository_opens_in_the_background(hub, cloze_repo, tmp_path):
    go = tmp_path / "go"
    go.write_text("go")
    prep = preparing.start(cloze_repo, examples=True, command=_command(go))
    assert prep.wait(60)
    commit = hub.repo_commits("test/tempcloze")["main"]
    assert preparing.status("cloze").ready and preparing.status("cloze").source == \
        f"hf://datasets/test/tempcloze@{commit}"
    assert preparing.status("impact").ready and preparing.status("impact").source == "examples"
    assert (prep.root / "impact" / ".complete").exists()


def test_a_repository_that_fails_to_open_marks_every_part(hub, tmp_path):
    prep = Preparation("hf://datasets/test/absent", examples=True, command=_command(tmp_path / "never")).start()
    assert prep.wait(30)
    for part in parts():
        status = prep.status(part)
        assert status.state == FAILED and "hf://datasets/test/absent was not found" in status.message


def test_status_of_an_unknown_part_is_refused(tmp_path):
    prep = Preparation(tmp_path, examples=False)
    with pytest.raises(Exception, match="Unknown part"):
        prep.status("movies")


def test_generate_part_shows_a_part_only_when_complete(tmp_path, monkeypatch):
    """examples/generate.py builds aside and moves the finished part into place."""
    module = tmp_path / "fake_example_part.py"
    module.write_text(textwrap.dedent("""
        import json
        from pathlib import Path
        def generate(out_dir, seed=0, progress=None):
            out_dir = Path(out_dir)
            assert out_dir.parent.name == ".partial" and not (out_dir.parent.parent / "cloze").exists()
            for i in range(3):
                (out_dir / f"{i}.txt").write_text(str(i))
                progress((i + 1) / 4)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(generate, "generator_module", lambda part: "fake_example_part" if part == "cloze" else None)
    seen = []
    out = generate.generate_part("cloze", tmp_path / "data", progress=seen.append)
    assert out == tmp_path / "data" / "cloze" and (out / ".complete").exists() and (out / "2.txt").exists()
    assert seen == [0.25, 0.5, 0.75, 1.0] and not (tmp_path / "data" / ".partial").exists()
    progress_file = tmp_path / "progress.json"
    generate.generate_all(tmp_path / "data2", ["cloze"], progress_file=progress_file)
    assert json.loads(progress_file.read_text()) == {"part": "cloze", "fraction": 1.0}
