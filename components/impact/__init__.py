"""Impact tab (HAPACT): temporal impact localization in short clips and on-body region selection.

Pure logic lives in the modules here (annotations, intervals, temporal_prompt, temporal_solvers,
temporal_metrics, regions, region_prompt, region_baseline, body, spatial_metrics, render, view);
`solvers.py` picks a backend's solvers, `pipeline.py` runs one clip end to end for both front ends:
the `ui/` package (the only place gradio is imported) and `cli.py` (`python app.py eval|run`).
"""
