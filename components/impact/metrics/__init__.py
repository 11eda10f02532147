"""HAPACT's metrics: temporal (moments in clips) and spatial (on-body regions)."""
