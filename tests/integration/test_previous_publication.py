"""The previous publication of a committed report, found in a real git history (report.previous): what
``nox -s publish`` compares with, never the report it rebuilds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd

from matrix.records import figures
from matrix.report import previous


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def publish(root: Path, statuses: list, message: str) -> str:
    """Commit a report folder whose cell table holds ``statuses``; the commit's id."""
    folder = root / "reports" / "latest"
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"case": ["a"] * len(statuses), "status": statuses}).to_parquet(folder / "cells.parquet")
    (folder / "index.md").write_text("# %s\n" % message, encoding="utf-8")
    (folder / figures.FILE).write_text(figures.dumps({"fixes": len(statuses)}), encoding="utf-8")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def test_the_previous_publication_is_the_newest_other_cell_table_in_history(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    first = publish(root, ["pass"], "first")
    second = publish(root, ["pass", "fail"], "second")
    # A commit that re-renders the pages only: not a publication of other cells.
    (root / "reports" / "latest" / "index.md").write_text("# second, re-rendered\n", encoding="utf-8")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "pages")
    folder = str(root / "reports" / "latest")
    records = tmp_path / "results"
    records.mkdir()

    # New records: compared with the report committed now.
    found = previous.find(folder, [str(records)])
    assert found is not None and found.commit == second
    # The committed report rebuilt from its own tables: compared with the one before it, never with itself.
    again = previous.find(folder, [folder])
    assert again is not None and again.commit == first

    copied = Path(previous.extract(folder, again, str(tmp_path / "baseline")))
    assert copied.name == "latest@%s" % first[:7]
    assert pd.read_parquet(copied / "cells.parquet")["status"].tolist() == ["pass"]
    assert (copied / "index.md").read_text(encoding="utf-8") == "# first\n"
    assert figures.read(str(copied), None) == {"fixes": 1}
    # The command nox -s publish runs prints that folder, and nothing where history holds no other table.
    assert previous.main([folder, str(tmp_path / "b2"), folder]) == 0
    assert previous.find(str(tmp_path / "elsewhere"), []) is None
