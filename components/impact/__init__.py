"""Impact tab (HAPACT): temporal impact localization in short clips and on-body region selection.

Pure logic lives in the modules here (data, intervals, prompts/ (temporal, regions), temporal_solvers,
metrics/ (temporal, spatial), regions, region_baseline, body, render, view);
`solvers.py` picks a backend's solvers, `pipeline.py` runs one clip end to end for both front ends:
the `ui/` package (the only place gradio is imported) and `cli.py` (`python app.py eval|run`).
"""
