"""Unit tests: no process, no export; the loop after each change (`nox -s unit`)."""
