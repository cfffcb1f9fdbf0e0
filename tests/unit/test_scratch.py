"""A run's temporary folder: the temporary folder of what the run starts, removed with the run; killed runs' swept."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from matrix.worker import scratch

# A process id above any system's limit (Linux's is at most 2^22): no process has it.
DEAD = 2**31 - 2


def test_the_run_folder_is_every_started_process_temporary_folder_and_goes_with_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    before = tempfile.gettempdir(), os.environ.get("TMPDIR")
    with scratch.run_folder(str(tmp_path)) as folder:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(folder, "torchinductor_me")  # as torch sets it
        assert Path(folder).parent == tmp_path and Path(folder).name.startswith(scratch.PREFIX)
        assert oct(os.stat(folder).st_mode & 0o777) == oct(0o700)  # private
        assert tempfile.gettempdir() == folder and tempfile.mkdtemp().startswith(folder + os.sep)
        assert os.environ["TMPDIR"] == folder  # a process started in it makes its files there too
        (Path(folder) / "deep" / "er").mkdir(parents=True)
        (Path(folder) / "deep" / "er" / "package.pt2").write_bytes(b"x" * 1000)
    assert not Path(folder).exists() and list(tmp_path.iterdir()) == []
    assert (tempfile.gettempdir(), os.environ.get("TMPDIR")) == before
    assert "TORCHINDUCTOR_CACHE_DIR" not in os.environ  # nothing left pointing into the removed folder


def test_the_folder_is_removed_and_the_temporary_folder_restored_when_the_run_raises(tmp_path: Path) -> None:
    before = tempfile.gettempdir()
    with pytest.raises(KeyboardInterrupt):
        with scratch.run_folder(str(tmp_path)):
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == [] and tempfile.gettempdir() == before


def test_only_folders_of_gone_runs_of_this_host_and_user_are_swept(tmp_path: Path) -> None:
    host = scratch._host()
    dead, alive = DEAD, os.getppid()
    made = {
        "gone": "%s%s-%d-abc" % (scratch.PREFIX, host, dead),
        "running": "%s%s-%d-abc" % (scratch.PREFIX, host, alive),
        "this process": "%s%s-%d-abc" % (scratch.PREFIX, host, os.getpid()),
        "another host": "%s%s-%d-abc" % (scratch.PREFIX, host + "x", dead),
        "not ours": "export-matrix-programs-%d" % dead,
    }
    for name in made.values():
        (tmp_path / name).mkdir()
        (tmp_path / name / "kept.pt2").write_bytes(b"program")
    (tmp_path / ("%s%s-%d-file" % (scratch.PREFIX, host, dead))).write_text("a file, not a folder")
    assert scratch.stale(str(tmp_path)) == [str(tmp_path / made["gone"])]
    with scratch.run_folder(str(tmp_path)) as folder:
        left = sorted(path.name for path in tmp_path.iterdir() if str(path) != folder)
    assert made["gone"] not in left and len(left) == len(made)  # the others, and the file, are still there
    assert scratch.stale(str(tmp_path / "missing")) == []
