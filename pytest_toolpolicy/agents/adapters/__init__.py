"""One file per external agent (each named in ``arm_registry.py``): how it starts in the sandbox
(``launch``), and what its name takes (``check``, ``NEEDS``, ``FORM``). Standard library only at
import: a Python agent's sandbox imports this package too."""
