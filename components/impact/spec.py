"""The Impact tab's row in the tab registry (components/base/tabs.py)."""
from components.base.tabs import TabSpec

SPEC = TabSpec(
    id="impact", title="Impact", benchmark="HAPACT",
    link_keys=("clip", "frame"),
    generator="examples.impact_clips", holds=("annotations.json",), annotation_keys=("items",),
    example_seconds=10, runs="ui.handlers.runs_panel:loader_for",
)
