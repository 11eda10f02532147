"""A visitor's backends are theirs: kept for their clicks, closed when their page closes (after
the last tab let go of them), another visitor's left alone, a local model's weights shared."""
from __future__ import annotations

from types import SimpleNamespace

from backends.record import RecordingBackend
from backends.shared import once_per_process
from components.common.sessions import Resources, SessionRegistry
from components.common.ui import TabEvents
from components.settings.session import BackendKey, VisitorBackends, backend_for, release_backends
from tests.backends.support import ScriptedBackend


class Closing(ScriptedBackend):
    def __init__(self, replies) -> None:
        super().__init__(replies)
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def _api_state(session: str) -> dict:
    return {"backend": "openai:m", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-visitor",
            "session": session}


def test_a_closed_page_closes_its_visitors_backends_and_leaves_anothers():
    alice, bob = backend_for(_api_state("floor-alice")), backend_for(_api_state("floor-bob"))
    assert alice is not bob and backend_for(_api_state("floor-alice")) is alice    # kept across clicks
    release_backends("floor-alice")
    assert alice._client.is_closed()                              # its HTTP client closed
    assert not bob._client.is_closed() and backend_for(_api_state("floor-bob")) is bob
    again = backend_for(_api_state("floor-alice"))                # the page opened anew: a new one
    assert again is not alice and not again._client.is_closed()
    release_backends("floor-bob")
    release_backends("floor-alice")


def test_the_backends_go_when_the_last_tab_of_the_page_lets_go():
    first, second = SessionRegistry(Resources), SessionRegistry(Resources)
    first.get("floor-carol")
    second.get("floor-carol")
    backend = backend_for(_api_state("floor-carol"))
    page = SimpleNamespace(session_hash="floor-carol")
    TabEvents(None, first, None).release(page)
    assert not backend._client.is_closed()                         # the other tab may still use it
    TabEvents(None, second, None).release(page)
    assert backend._client.is_closed() and backend_for(_api_state("floor-carol")) is not backend
    release_backends("floor-carol")


def _key(spec: str, session: str) -> BackendKey:
    return BackendKey(spec=spec, base_url=None, api_key_sha256=None, max_images=None, record_to=None,
                      session=session)


def test_a_local_models_weights_stay_loaded_when_a_visitor_leaves(tmp_path):
    backends = VisitorBackends(per_visitor=4, max_visitors=4)
    shared = once_per_process(Closing, "floor-shared-weights", lambda: Closing(["kept"]))
    own = Closing(["mine"])
    assert backends.get(_key("hf:tiny", "dora"), lambda: shared) is shared
    recorder = backends.get(_key("hf:tiny#rec", "dora"), lambda: RecordingBackend(shared, tmp_path / "t.jsonl"))
    assert backends.get(_key("scripted", "dora"), lambda: own) is own
    erin = Closing(["erin's"])
    backends.get(_key("scripted", "erin"), lambda: erin)
    backends.release("dora")
    assert own.closed == 1 and shared.closed == 0 and isinstance(recorder, RecordingBackend)
    assert erin.closed == 0 and backends.of("erin").peek(_key("scripted", "erin")) is erin
    assert len(backends.of("dora")) == 0                           # nothing of dora's kept


def test_settings_applied_outside_a_page_share_one_set_that_no_page_closes():
    backends = VisitorBackends(per_visitor=2, max_visitors=2)
    cli = Closing(["cli"])
    assert backends.get(_key("scripted", "cli"), lambda: cli) is cli
    assert backends.get(_key("scripted", ""), lambda: Closing(["other"])) is not cli   # another key
    backends.release("cli")
    backends.release("")
    assert cli.closed == 0 and backends.of("cli").peek(_key("scripted", "cli")) is cli


def test_visitors_kept_are_bounded_and_each_visitors_backends_too():
    backends = VisitorBackends(per_visitor=2, max_visitors=3)
    for visitor in range(5):
        for spec in range(4):
            backends.get(_key(f"s{spec}", f"v{visitor}"), lambda: Closing(["x"]))
    assert len(backends.visitors) == 3 and all(len(backends.of(f"v{v}")) == 2 for v in (2, 3, 4))
