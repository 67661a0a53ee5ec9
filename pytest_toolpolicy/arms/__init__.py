"""What every arm shares beneath its own loop: ``finish.py``, the one way a run becomes a
``Trajectory``. (Which arm a name builds is ``arm_registry.py``, above the loops.)"""
