"""The A/B as a pytest session: its options and settings (``settings.py``, ``endpoint.py``,
``confinement.py``), its hooks (``hooks.py``, ``items.py``, ``item.py``), the session object
(``session.py``), the environment stage before its items (``environments.py``), its live
progress (``progress*.py``, ``ticker.py``), the report directory
(``store.py``), the controller's handover to its workers (``handover.py``) and the end of the
session (``report.py``).

The only part of the package that imports pytest (besides ``plugin.py`` and ``plugin_impl.py``,
its entrances): what one item does is ``run/``, the table it ends in ``decide/``. Loading the
plugin imports this package's ``__init__`` only, so it stays this docstring.
"""
