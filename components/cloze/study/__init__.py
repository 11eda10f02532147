"""The human study as a study: the released protocol (protocol.py), opaque media (media.py), the
researcher's study file (config.py), cached question sets (cache.py), study design (design.py) and
the annotator/researcher page (app.py, `python -m components.cloze.study`)."""
