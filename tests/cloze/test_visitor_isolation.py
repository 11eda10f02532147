"""A public Space is shared by strangers: a visitor's uploads, builds and runs are the visitor's
own (another page neither lists nor opens them; they go when the page closes), a bad zip leaves
nothing behind, and the Data folder box opens only folders inside the data folder."""
import shutil
import zipfile
from pathlib import Path

import pytest

from components.cloze.ui import handlers
from components.cloze.ui.session import RESOURCES, ClozeSession, ClozeTab, resolve_root
from components.common.sessions import Resources
from components.base.errors import UserError


TAB = ClozeTab("")


def page(name: str) -> Resources:
    """The resources of the page `name` (as gradio's session hash picks them)."""
    return RESOURCES.get(name)


@pytest.fixture
def data(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_ADMIN", raising=False)
    monkeypatch.delenv("APP_CLOZE_RUNS_DIR", raising=False)
    root = tmp_path / "data"
    shutil.copytree(cloze_examples, root / "cloze")
    return root


def _zip(src: Path, dest: Path, *, broken: bool = False) -> Path:
    with zipfile.ZipFile(dest, "w") as zf:
        for f in sorted(src.rglob("*")):
            if f.is_file() and (not broken or "choices" not in f.parts):
                zf.write(f, f.relative_to(src.parent))
    return dest


def test_the_data_folder_box_opens_only_folders_inside_the_data_folder(data):
    assert resolve_root("cloze", str(data)) == str((data / "cloze").resolve())
    assert resolve_root(str(data / "cloze"), str(data)) == str((data / "cloze").resolve())
    for outside in ("/etc", "../", "cloze/../../"):
        with pytest.raises(UserError, match="inside the app's data folder"):
            resolve_root(outside, str(data))


def test_an_upload_is_the_uploaders_own_and_goes_when_the_page_closes(data, tmp_path):
    mine = ClozeSession(data_dir=str(data))
    view = handlers.upload(TAB, page("page-a"), mine, str(_zip(data / "cloze", tmp_path / "set.zip")))
    assert not Path(view.root).is_absolute() and view.root.startswith("cloze/uploads/")  # no server path
    folder = Path(view.session.own_roots[0])
    handlers.load_root(TAB, page("page-a"), view.session, view.root)                    # the uploader opens it
    with pytest.raises(UserError, match="not a folder this page uploaded"):
        handlers.load_root(TAB, page("page-z"), ClozeSession(data_dir=str(data)), view.root)   # another page cannot
    RESOURCES.release("page-a")
    assert not folder.exists()


def test_a_bad_zip_leaves_no_folder_behind(data, tmp_path):
    bad = _zip(data / "cloze", tmp_path / "bad.zip", broken=True)
    with pytest.raises(UserError, match="choices/<stem>/"):
        handlers.upload(TAB, page("page-b"), ClozeSession(data_dir=str(data)), str(bad))
    assert list((data / "cloze" / "uploads").iterdir()) == []


def test_a_run_shows_only_on_the_leaderboard_of_the_page_that_made_it(data, monkeypatch):
    session = ClozeSession(data_dir=str(data))
    run = handlers.run_whole_set(TAB, page("page-c"), session, {"backend": "baseline"}, "cloze", "all", "S", 42, "edge1", False, "api")
    assert Path(run.results_file["value"]).is_file()

    def names(res):
        return [str(row[0]) for row in handlers.refresh(TAB, res, session, [], [], "").leaderboard["value"]["data"]]
    mine, other = names(page("page-c")), names(page("page-d"))
    made = [n for n in mine if n not in other]
    assert made and all("baseline" in n.lower() or "edge" in n.lower() for n in made), (mine, other)
    RESOURCES.release("page-c")
    assert not Path(run.results_file["value"]).exists()
    monkeypatch.setenv("APP_ADMIN", "1")                              # the operator's shared runs
    run = handlers.run_whole_set(TAB, page("page-e"), session, {"backend": "baseline"}, "cloze", "all", "S", 42, "edge1", False, "api")
    assert Path(run.results_file["value"]).parent == handlers.runs_dir(str(data))
    assert set(names(page("page-f"))) >= set(made)


def test_a_page_closed_during_a_set_run_stops_the_run_before_its_folder_goes(data, monkeypatch):
    """The crash of issue 21: a run still writing when its page closed wrote its result file into
    the folder the close had just removed. The close now stops the run, waits for it, then removes."""
    import threading
    import time
    from types import SimpleNamespace

    from components.cloze.solvers import EdgeSolver
    from components.cloze.ui.handlers import model_panel

    answering = threading.Event()

    class SlowEdge(EdgeSolver):
        def answer(self, inst, q):
            answering.set()
            time.sleep(0.3)                       # a question takes a while (a real model's call)
            return super().answer(inst, q)

    monkeypatch.setattr(model_panel, "solvers_for", lambda backend, settings: SimpleNamespace(
        solver=SlowEdge(), name="baseline:slow-edge"))
    session = ClozeSession(data_dir=str(data))
    outcome = {}

    def run() -> None:
        try:
            outcome["view"] = handlers.run_whole_set(TAB, page("page-closing"), session, {"backend": "baseline"},
                                                     "cloze", "all", "S, A, P", 42, "edge1", False, "api")
        except Exception as exc:  # noqa: BLE001 - the test reports it
            outcome["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    assert answering.wait(60)
    folder = page("page-closing").folders[0]
    RESOURCES.release("page-closing")             # returns once the run has stopped
    assert not worker.is_alive() or worker.join(5) is None
    assert "error" not in outcome, outcome.get("error")
    assert "stopped" in outcome["view"].summary and not folder.exists()
