"""The Cloze tab's row in the tab registry (components/base/tabs.py)."""
from components.base.tabs import TabSpec

SPEC = TabSpec(
    id="cloze", title="Cloze", benchmark="TempCloze",
    link_keys=("stem", "q"),
    # TempCloze's released layout: choices/ (or choices_human/), or one such folder per set
    generator="examples.cloze_data", holds=("choices/", "choices_human/", "*/choices/"),
    example_seconds=47, runs="ui.handlers.question:loader_for",
)
