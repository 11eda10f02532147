"""Every shell block of README.md runs as written on the example data (issue 27).

Each ```bash block is one test: its commands run one by one in a temp folder holding `data/` (the
example data: the cloze part copied, since the study commands write into it; the others linked)
and `app.py`, with the venv's `python` first on PATH, offline. A server command (`python app.py`
with no subcommand, `python -m components.cloze.study` with none) is started on a free port,
checked to answer HTTP and stopped; a study server is first answered by every annotator whose
invitation link an earlier command of the block printed (practice question, then every question),
so the block's scoring command scores a real study folder, practice answers in it. A block that needs what a test machine lacks (a GPU, a model
server, the Hugging Face Hub, or `make demo` / `make test` themselves) carries a marker on the line
before its fence, `<!-- readme-test: skip: <why> -->`, and is skipped with that reason shown."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKER = re.compile(r"<!--\s*readme-test:\s*skip:\s*(.+?)\s*-->")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
COMMAND_TIMEOUT_S = 300
SERVER_START_S = 120


@dataclass(frozen=True)
class Block:
    line: int            # the opening fence's line in README.md (1-based)
    commands: tuple[str, ...]
    skip: str            # the marker's reason ('' when the block must run)


def readme_blocks(text: str) -> list[Block]:
    """The ```bash blocks of `text`, each as its commands (continuation lines and here-documents
    joined), with the skip marker of the line before the fence."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start, indent, lang = i, len(fence.group(1)), fence.group(2)
        i += 1
        body = []
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1
        if lang != "bash":
            continue
        before = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        marker = MARKER.search(before)
        blocks.append(Block(start + 1, tuple(split_commands(body)), marker.group(1) if marker else ""))
    return blocks


def split_commands(body: list[str]) -> list[str]:
    commands, i = [], 0
    while i < len(body):
        line = body[i]
        i += 1
        if not line.strip():
            continue
        while line.endswith("\\") and i < len(body):
            line = line[:-1] + " " + body[i].strip()
            i += 1
        heredoc = re.search(r"<<-?'?(\w+)'?", line)
        if heredoc:
            end = heredoc.group(1)
            doc = []
            while i < len(body) and body[i].strip() != end:
                doc.append(body[i])
                i += 1
            i += 1
            line = "\n".join([line, *doc, end])
        commands.append(line)
    return commands


def _words(command: str) -> list[str]:
    """The command's words after any leading VAR=value assignments, comments dropped."""
    words = shlex.split(command.split("\n")[0], comments=True)
    while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
        words.pop(0)
    return words


def is_server(command: str) -> bool:
    words = _words(command)
    if words[:2] == ["python", "app.py"]:
        return len(words) == 2 or words[2].startswith("--")
    if words[:3] == ["python", "-m", "components.cloze.study"]:
        return len(words) == 3 or words[3].startswith("--")
    return False


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def test_the_human_study_block_scores_a_study_with_practice_on():
    """The "Running a human study" block invites annotators, serves the page and ends with the
    scoring command over the study's folder (the runner answers as the annotators in between); its
    study file leaves practice on (the default), so the folder holds practice answers."""
    block = next(b for b in BLOCKS if any("components.cloze.study invite" in c for c in b.commands))
    assert not block.skip and any(is_server(c) for c in block.commands)
    study = json.loads(block.commands[0].split("\n", 1)[1].rsplit("\n", 1)[0])
    assert study.get("practice", True) is True
    last = block.commands[-1]
    assert "eval cloze --human" in last and f"{study['results']}/{study['id']}/*.jsonl" in last


def test_the_readme_has_blocks_to_run_and_every_skipped_one_says_why():
    assert sum(1 for b in BLOCKS if not b.skip) >= 2
    assert all(len(b.skip) > 10 for b in BLOCKS if b.skip)
    # the placeholder forms are only in skipped blocks: a runnable block names real files
    for block in BLOCKS:
        if not block.skip:
            assert not re.search(r"\bSPEC\b|<[a-z]+>", "\n".join(block.commands)), block.line


@pytest.fixture(scope="module")
def workdir(example_data_dir, tmp_path_factory) -> Path:
    """A folder like a fresh clone after `python -m examples.generate --out data`."""
    work = tmp_path_factory.mktemp("readme")
    data = work / "data"
    data.mkdir()
    for part in ("grounding", "impact"):
        (data / part).symlink_to((example_data_dir / part).resolve())
    shutil.copytree((example_data_dir / "cloze").resolve(), data / "cloze")
    (work / "app.py").symlink_to(ROOT / "app.py")
    return work


def _env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("APP_", "OPENAI_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(ROOT),
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False",
               APP_CACHE_DIR=str(work / "cache"), APP_TRACE_DIR=str(work / "traces"))
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _on_port(command: str, port: int) -> str:
    if re.search(r"--port\s+\d+", command):
        return re.sub(r"--port\s+\d+", f"--port {port}", command)
    first, _, rest = command.partition("\n")
    return f"{first} --port {port}" + (f"\n{rest}" if rest else "")


INVITE = re.compile(r"^(\S+)\t\S*\?invite=(\S+)$", re.M)
ANSWERED = re.compile(r"answered (\d+)/(\d+)")


def _answer_as(url: str, token: str) -> int:
    """One invited annotator on the study page, over its HTTP API as the page calls it: Start, the
    practice question, Begin, then A for every question (Submit too, for the confirm flow).
    Returns how many questions they answered."""
    from gradio_client import Client

    client = Client(url, verbose=False, download_files=False)
    try:
        shown = json.dumps(client.predict(token, api_name="/study_start"), default=str)
        if "before you start" in shown:
            client.predict(api_name="/study_practice_0")
            shown = json.dumps(client.predict(api_name="/study_begin"), default=str)
        for _ in range(100):
            done, total = map(int, ANSWERED.findall(shown)[-1])
            if done >= total:
                return done
            client.predict("", api_name="/study_choice")
            shown = json.dumps(client.predict("", api_name="/study_submit"), default=str)
            if ANSWERED.findall(shown) and int(ANSWERED.findall(shown)[-1][0]) == done:   # immediate flow
                shown = json.dumps(client.predict(api_name="/study_next"), default=str)
        raise AssertionError(f"the study did not finish: {shown[-500:]}")
    finally:
        client.close()


def _serve_and_check(command: str, work: Path, printed: str = "") -> None:
    """Start the server on a free port, wait until it answers HTTP 200 (a study server: answered
    by every annotator whose invitation `printed` holds), stop it."""
    port = _free_port()
    log = work / f"server-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["bash", "-c", _on_port(command, port)], cwd=work, env=_env(work),
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + SERVER_START_S
        status = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as reply:
                    status = reply.status
                    break
            except OSError:
                time.sleep(0.5)
        assert status == 200, f"{command!r} did not answer on port {port}:\n{log.read_text()[-3000:]}"
        if _words(command)[:3] == ["python", "-m", "components.cloze.study"]:
            for name, token in INVITE.findall(printed):
                assert _answer_as(f"http://127.0.0.1:{port}/", token) > 0, name
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)


@pytest.mark.slow   # about two minutes on 2 cores: `make test` runs it, `make test-fast` does not
@pytest.mark.parametrize("block", BLOCKS, ids=[f"README-line-{b.line}" for b in BLOCKS])
def test_each_readme_block_runs_as_written(block: Block, workdir: Path):
    if block.skip:
        pytest.skip(f"README line {block.line}: {block.skip}")
    printed = ""
    for command in block.commands:
        if is_server(command):
            _serve_and_check(command, workdir, printed)
            continue
        done = subprocess.run(["bash", "-c", command], cwd=workdir, env=_env(workdir), capture_output=True,
                              text=True, timeout=COMMAND_TIMEOUT_S)
        assert done.returncode == 0, (f"README line {block.line}: {command!r} exited {done.returncode}:\n"
                                      f"{(done.stdout + done.stderr)[-3000:]}")
        printed += done.stdout
        if "eval cloze --human" in command:   # the study's folder, practice answers in it, scored
            assert "practice answers not scored" in done.stderr and "acc" in done.stdout, done.stderr
