"""The Window search tab's row in the tab registry (components/base/tabs.py)."""
from components.base.tabs import TabSpec

SPEC = TabSpec(
    id="window_search", title="Window search", benchmark="CoM2-Bench",
    # the data folder (and so `app.py eval grounding`) keeps the benchmark task's name: data
    # folders and run files made before the registry hold grounding/
    data="grounding",
    # the element ids' prefix, short as the tab's selectors are many (#ws-movie, #ws-side, ...)
    prefix="ws",
    # ("aws", Agentic Window Search, is the paper's method: `--method aws`, assets/prompts/aws_*.txt;
    # a method's name, not the tab's)
    link_keys=("movie", "qid", "t"),
    generator="examples.movie", holds=("annotations.json",), annotation_keys=("pairs", "movies"),
    example_seconds=11, runs="ui.handlers.runs_panel:loader_for",
)
