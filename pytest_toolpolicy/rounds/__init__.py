"""The spec's later rounds (§2 rows 9–13) as candidates judged by §9: each retriever measured
against the gold labels (``retrieval.py``), necessity labels as data (``labels.py``), row 9's
threshold fitted on a training split and scored on a test split (``calibrate.py``), and the
candidates file the next A/B runs (``rounds_file.py``). The trigger itself is a policy stage:
``policy/confidence.py``."""
