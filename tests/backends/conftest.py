"""Fixtures for the backend tests."""
from __future__ import annotations

import pytest

from tests.backends.support import SharedServer
from tests.helpers.openai_server import ScriptedOpenAIServer


@pytest.fixture(autouse=True)
def _no_ambient_api_env(monkeypatch):
    """Tests name their server and key explicitly; ambient settings must not leak in."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "APP_MAX_IMAGES_PER_REQUEST",
                 "APP_API_IMAGE_MAX_SIDE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def _api_server():
    with ScriptedOpenAIServer(["unused"]) as server:
        yield server


@pytest.fixture()
def serve(_api_server) -> SharedServer:
    """`with serve([...]) as server:` runs a script on the session's scripted OpenAI server."""
    return SharedServer(_api_server)
