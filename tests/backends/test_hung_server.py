"""A hung server (accepts, never answers) stops a run within 5 minutes with the default settings,
with one line naming the server and the timeout (issue 38 item 11). A real socket server on
127.0.0.1 that accepts connections and never answers; the timeout scaled down with --timeout."""
from __future__ import annotations

import socket
import threading

import pytest

from app import build_parser, main
from backends.config import DEFAULT_TIMEOUT_S, HUNG_AFTER_TIMEOUTS, ApiSettings
from backends.openai_api import OpenAIBackend, hung_worst_case_s
from components.cloze.solvers import MAX_ATTEMPTS
from components.common.cli import DEFAULT_STOP_AFTER

FIVE_MINUTES_S = 300.0


class SilentServer:
    """Accepts every connection and never reads or answers; counts the connections."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.accepted: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted.append(conn)

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        for conn in self.accepted:
            conn.close()
        self.sock.close()


def test_the_default_worst_case_is_within_five_minutes(monkeypatch):
    monkeypatch.delenv("APP_API_TIMEOUT_S", raising=False)
    backend = OpenAIBackend("m", ApiSettings(base_url="http://127.0.0.1:9/v1", api_key="x"))
    assert backend.settings.timeout_s == DEFAULT_TIMEOUT_S and backend.hung.limit == HUNG_AFTER_TIMEOUTS
    detect = hung_worst_case_s(backend.settings.timeout_s, backend.policy, backend.hung.limit)
    # then each of the --stop-after-failures questions in a row fails at once, but for the cloze
    # re-asks' sleeps (retry_sleep x attempt, the released evaluator's)
    args = build_parser().parse_args(["run", "cloze", "--data", "d", "--out", "o.json"])
    assert args.stop_after_failures == DEFAULT_STOP_AFTER
    after = DEFAULT_STOP_AFTER * sum(args.retry_sleep * a for a in range(1, MAX_ATTEMPTS))
    assert detect + after <= FIVE_MINUTES_S, (detect, after)
    # before: 5 questions x 3 attempts x 3 tries x 120 s
    assert DEFAULT_STOP_AFTER * MAX_ATTEMPTS * (ApiSettings().max_retries + 1) * DEFAULT_TIMEOUT_S > FIVE_MINUTES_S


def _one_line_naming(err: str, server: SilentServer, timeout: str) -> None:
    port = server.url.split(":")[2].split("/")[0]
    named = [line for line in err.splitlines() if f"127.0.0.1:{port}" in line and f"within {timeout} s" in line]
    assert named, err
    assert "Traceback" not in err


@pytest.mark.parametrize("extra", [[], ["--concurrency", "4"]])
def test_a_cloze_run_against_a_hung_server_stops_after_two_timeouts(cloze_examples, tmp_path, monkeypatch,
                                                                   capsys, extra):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with SilentServer() as server:
        rc = main(["run", "cloze", "--data", str(cloze_examples), "--backend", "openai:m", "--base-url",
                   server.url, "--out", str(tmp_path / "c.json"), "--dims", "S", "--limit", "8",
                   "--timeout", "0.3", "--retry-sleep", "0", "--no-progress", *extra])
        connections = len(server.accepted)
    err = capsys.readouterr().err
    assert rc == 1
    # two requests timed out, then nothing more was sent (before: 9 a question, 5 questions)
    assert connections <= (4 if extra else 2), connections
    _one_line_naming(err, server, "0.3")
    assert "cloze questions in a row failed" in err and "sk-test" not in err


def test_grounding_and_impact_runs_against_a_hung_server_stop_after_two_timeouts(
        grounding_examples, impact_examples, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("APP_API_TIMEOUT_S", "0.3")    # the variable scales it down as well
    with SilentServer() as server:
        rc = main(["run", "grounding", "--annotations", str(grounding_examples / "annotations.json"),
                   "--backend", "openai:m", "--base-url", server.url, "--method", "rag",
                   "--out", str(tmp_path / "p.jsonl"), "--no-progress"])
        assert rc == 1 and len(server.accepted) == 2, len(server.accepted)
    _one_line_naming(capsys.readouterr().err, server, "0.3")
    with SilentServer() as server:
        rc = main(["run", "impact", "--annotations", str(impact_examples / "annotations.json"),
                   "--backend", "openai:m", "--base-url", server.url, "--out", str(tmp_path / "imp"),
                   "--tasks", "temporal", "--no-progress"])
        assert rc == 1 and len(server.accepted) == 2, len(server.accepted)
    _one_line_naming(capsys.readouterr().err, server, "0.3")
