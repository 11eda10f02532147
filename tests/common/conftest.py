"""The local Hub server's fixtures (tests/datasource/conftest.py) for the tests here that open a
dataset repository."""
from tests.datasource.conftest import cloze_repo, hub  # noqa: F401
