"""Deterministic example-data generator (`python -m examples.generate --out data`)."""
