"""What every tab shares: intervals, validation, paths, limits, batch runs, run files, statistics, and
the gradio layer every page stands on (ui.py, page.py, theme.py, the Model panel)."""
