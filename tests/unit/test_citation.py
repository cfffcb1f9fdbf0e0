"""What a reader citing a report finds in its header: the tool's commit and build date (report.stamp), the machine,
the GPU and each build's device (report.citation); and a rebuild differs from the last only there."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from matrix.contract import checkout
from matrix.report import build as report
from matrix.report import citation, stamp

from conftest import history, write_by_release

SHA = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


def test_the_build_date_is_source_date_epochs_day_where_set() -> None:
    assert stamp.build_date({"SOURCE_DATE_EPOCH": "1767225600"}) == "2026-01-01"
    assert stamp.build_date({"SOURCE_DATE_EPOCH": "not a time"}) == stamp.build_date({})  # today, in UTC


def test_the_commit_is_read_from_a_branch_a_packed_ref_or_a_detached_head(tmp_path: Path) -> None:
    git = tmp_path / "repo" / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(SHA + "\n")
    inside = tmp_path / "repo" / "matrix" / "report"
    inside.mkdir(parents=True)
    assert checkout.commit(str(inside)) == SHA[:12]
    (git / "refs" / "heads" / "main").unlink()
    (git / "packed-refs").write_text("# pack-refs with: peeled\n%s refs/heads/main\n" % OTHER)
    assert checkout.commit(str(inside)) == OTHER[:12]
    (git / "HEAD").write_text(SHA + "\n")
    assert checkout.commit(str(inside)) == SHA[:12]
    assert checkout.commit(str(tmp_path)) == ""  # no checkout holds it


def test_a_worktree_reads_its_branch_through_the_common_folder(tmp_path: Path) -> None:
    main = tmp_path / "main" / ".git"
    own = main / "worktrees" / "wt"
    own.mkdir(parents=True)
    (main / "refs" / "heads").mkdir(parents=True)
    (main / "refs" / "heads" / "topic").write_text(OTHER + "\n")
    (own / "HEAD").write_text("ref: refs/heads/topic\n")
    (own / "commondir").write_text("../..\n")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text("gitdir: %s\n" % own)
    assert checkout.commit(str(tree)) == OTHER[:12]
    assert stamp.Stamp(OTHER[:12], "0.1.0", "2026-01-01").words() == (
        "built 2026-01-01 by export-matrix 0.1.0 at commit %s" % OTHER[:12]
    )
    assert "commit unknown" in stamp.Stamp("", "", "2026-01-01").words()


def test_a_record_folder_is_cited_with_its_runs_commit_only_where_every_run_names_the_same() -> None:
    assert stamp.of_runs(["0123456789ab", "0123456789ab"]) == stamp.Stamp("0123456789ab", "", "")
    assert stamp.of_runs(["0123456789ab", float("nan")]) == stamp.UNKNOWN  # a run made before records kept it
    assert stamp.of_runs(["0123456789ab", "fedcba987654"]) == stamp.UNKNOWN  # made by two commits: neither is it
    assert stamp.of_runs([]) == stamp.UNKNOWN


def environments(**extra: object) -> pd.DataFrame:
    rows = [
        {"torch_version": "2.5.1+cu124", "device": "cpu", "cpu": "AMD EPYC", "cuda_available": False},
        {"torch_version": "2.15.0+cu132", "device": "cpu", "cpu": "AMD EPYC", "cuda_available": False},
    ]
    return pd.DataFrame([{**row, **extra} for row in rows])


def test_a_cuda_build_that_ran_without_a_gpu_says_gpu_none_and_the_cores_it_had() -> None:
    envs = environments(cores=2)
    assert citation.cpu(envs) == "AMD EPYC, 2 cores"
    assert citation.gpu(envs) == "none"
    assert citation.devices_words(envs) == "cpu: every build"
    # Records from before the environment record held the cores: said so, not guessed.
    assert citation.cpu(environments()) == "AMD EPYC, cores not recorded"
    assert citation.cpu(pd.DataFrame({"torch_version": ["2.5.1"]})) == "a CPU not recorded"


def test_each_builds_device_and_the_gpu_where_one_ran() -> None:
    envs = environments(cores=16)
    envs.loc[1, ["device", "cuda_available"]] = ["cuda", True]
    envs["gpu_name"] = [None, "NVIDIA H200"]
    assert citation.gpu(envs) == "NVIDIA H200"
    # A GPU the machine had but no cell used is no GPU run.
    unused = envs.assign(device="cpu")
    assert citation.gpu(unused) == "none (NVIDIA H200 present, unused)"
    assert citation.devices_words(envs) == "cpu: 2.5.1+cu124; cuda: 2.15.0+cu132"
    line = citation.line(stamp.Stamp("abc", "0.1.0", "2026-01-01"), envs)
    assert line == (
        "Built 2026-01-01 by export-matrix 0.1.0 at commit abc; cells run on dates not recorded on AMD EPYC,"
        " 16 cores; GPU: NVIDIA H200; device per build: cpu: 2.5.1+cu124; cuda: 2.15.0+cu132."
    )


def test_a_rebuild_on_another_day_differs_only_in_the_front_pages_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = write_by_release(tmp_path / "records", history())
    outs = [tmp_path / "a", tmp_path / "b"]
    for out, when in zip(outs, ("1767225600", "1767484800")):  # 2026-01-01, 2026-01-04
        monkeypatch.setenv(stamp.EPOCH, when)
        report.build_report([str(records)], str(out), charts=False)
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    differ = [str(f) for f in files if (outs[0] / f).read_bytes() != (outs[1] / f).read_bytes()]
    assert differ == ["index.md", "site/index.html", "stamp.json"]
    # The stamp, under the title and in "How to cite", in both forms; nothing else (the site's form is a few lines).
    for name in ("index.md", "site/index.html"):
        pairs = zip(*((out / name).read_text(encoding="utf-8").splitlines() for out in outs))
        changed = [(a.replace("2026-01-01", "DAY"), b.replace("2026-01-04", "DAY")) for a, b in pairs if a != b]
        assert changed and all(a == b for a, b in changed), changed
    lines = (outs[0] / "index.md").read_text(encoding="utf-8").splitlines()
    markdown = [line for line in lines if "2026-01-01" in line]
    assert [line[:12] for line in markdown] == ["Built 2026-0", "**How to cit"]
