"""The host's commands: `export-matrix check`, `bisect`, `repro`, and the `python -m` ones, with their helpers."""
