"""The shared "Model" settings panel: which backend a session uses (pure part in `session`)."""
