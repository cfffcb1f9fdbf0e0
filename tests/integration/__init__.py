"""Integration tests: real runs, exports, installs, nox and forks (`nox -s tests` runs them with the unit tests)."""
