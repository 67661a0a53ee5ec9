"""One item's run: a ready environment in, the arm's loop run in a fresh workspace
(``pipeline.py``, ``arms.py``), graded, its necessary calls scored by counterfactual reruns
(``counterfactual.py``, ``replay.py``, ``memo.py``), and its row out (``row.py``). Also the run's
settings (``generation.py``, ``candidates.py``, ``bandit.py``), where an item runs
(``itemdir.py``) and the sim's fault rates measured through the same pipeline.

Nothing here imports pytest: ``session/`` wires it into a pytest session, ``cli/`` into
``toolpolicy run``.
"""
