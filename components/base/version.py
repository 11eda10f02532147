"""The app's version, written into every run output's stamp (components/common/stamps.py): a resume
by another version is refused, so one output never mixes answers made by two versions' requests,
parsers or recording rules. Raise it with any change to what a model is sent, how a reply is read
or what a record holds (docs/formats.md "Run stamps")."""
from __future__ import annotations

APP_VERSION = "2026.12.1"
