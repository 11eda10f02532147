"""Which backend a session uses (`session`) and its recorded traces (`traces`); no gradio here (the
Model panel that sets them is components/common/model_panel.py)."""
