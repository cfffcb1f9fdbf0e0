"""The contract between host and worker: everything both sides share, and nothing else.

Statuses and record keys (``schema``), one-line errors and exit statuses (``errors``), option
helpers (``options``), record files (``records``), PEP 723 blocks and dependency sets
(``dependencies``), case metadata (``case``), the saved-program folder (``layout``), resource
limits (``resources``) and the typed requests that become the worker's command line
(``requests``). Standard library only, Python 3.8 syntax: the host imports it, and every torch
environment runs it from the worker's copy; it imports nothing else of this project.
"""
