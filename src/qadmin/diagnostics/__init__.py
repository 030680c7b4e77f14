"""Diagnosing a queue: the registry of diagnostics (``registry``), each one a module of
``entries``; the typed report (``model``); running them (``run``) and judging them for
monitoring (``check``)."""
