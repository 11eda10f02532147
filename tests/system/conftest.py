"""One in-process app shared by the system tests that drive it with gradio_client (the durability
test starts its own subprocess). Study answers and cloze runs go to this package's temp folders."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.live_app import running_app



@pytest.fixture(scope="package")
def system_dirs(tmp_path_factory) -> dict[str, Path]:
    return {"human": tmp_path_factory.mktemp("sys-human"), "runs": tmp_path_factory.mktemp("sys-runs")}


@pytest.fixture(scope="package")
def system_app(example_data_dir, system_dirs):
    with pytest.MonkeyPatch.context() as env:  # undone when the package's app stops
        env.setenv("APP_HUMAN_STUDY_DIR", str(system_dirs["human"]))
        env.setenv("APP_PRACTICE_DIR", str(system_dirs["human"]))  # the Cloze tab's playthroughs
        env.setenv("APP_CLOZE_RUNS_DIR", str(system_dirs["runs"]))
        with running_app(example_data_dir) as url:
            yield url


def client(url: str):
    from gradio_client import Client

    return Client(url, verbose=False, httpx_kwargs={"timeout": 120})


def question_number(progress_md: str) -> tuple[int, int, int]:
    """(1-based question shown, answered, total) from the cloze progress line."""
    m = re.search(r"Question (\d+) of (\d+).*answered (\d+)/(\d+)", progress_md)
    assert m, f"unexpected progress text: {progress_md!r}"
    return int(m.group(1)), int(m.group(3)), int(m.group(2))
