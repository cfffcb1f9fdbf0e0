"""Channels: their words in a selection, their variants and indexes, what their index offers, their failures."""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import pytest

from matrix.contract import options, records
from matrix.envs import (
    channels,
    companions,
    env_errors,
    environments,
    install,
    logs,
    pipconfig,
    releases,
    uvconfig,
)
from matrix.envs.channels import ChannelUnavailable
from matrix.envs.environments import Spec
from matrix.envs.install import Sources
from matrix.envs.releases import ReleaseError

from conftest import CURRENT, ROOT, FailingInstaller, make_wheel, write

MATRIX = releases.default_matrix()
NEWEST = MATRIX.releases[-1]
CHANNELS = {channel.name: channel for channel in MATRIX.channels}
TAG = "cp%s%s" % tuple(CURRENT.split("."))  # a wheel tag this interpreter installs


def simple_index(root: Path, wheels: Dict[str, Sequence[str]]) -> str:
    """A PEP 503 index in a folder (``simple/<name>/index.html`` beside the wheels), as a ``file://`` URL."""
    for name, versions in wheels.items():
        links = []
        for version in versions:
            wheel = make_wheel(root / "files", name, version)
            links.append('<a href="../../files/%s#sha256=%s">%s</a>' % (wheel.name, "ab" * 32, wheel.name))
        write(root / "simple" / name / "index.html", "\n".join(links) + "\n")
    return (root / "simple").as_uri()


def fake_channel(index: str, name: str = "nightly") -> releases.Build:
    """A pending build of a channel whose cpu index is ``index``, with a fake release's facts."""
    variant = releases.Variant(name + "-cpu", index, "EXPORT_MATRIX_TEST_CHANNEL", local_tag="cpu", channel=name)
    return releases.Build(releases.Release(name, "9.9", (CURRENT,), numpy_pin="fakenumpy"), variant)


def dated(build: releases.Build, day: str) -> releases.Build:
    release = build.release
    word = releases.channel_word(release.version, datetime.date.fromisoformat(day))
    return releases.Build(releases.Release(word, release.minor, release.pythons, release.numpy_pin), build.variant)


# --- the words ---------------------------------------------------------------------------------


def test_channel_words_name_pending_builds_of_their_own_variants() -> None:
    nightly = MATRIX.resolve("nightly")
    assert nightly.pending and nightly.date is None
    assert (nightly.release.version, nightly.variant.name, nightly.label) == ("nightly", "nightly-cpu", "nightly+cpu")
    assert nightly.variant.index({}) == "https://download.pytorch.org/whl/nightly/cpu"
    day = MATRIX.resolve("nightly:2026-01-15")
    assert (day.date, day.label, day.variant) == (datetime.date(2026, 1, 15), "nightly:2026-01-15+cpu", nightly.variant)
    # `rc` is the test channel's other word: one build, named by the channel.
    assert MATRIX.resolve("rc") == MATRIX.resolve("test")
    assert MATRIX.resolve("rc").variant.name == "test-cpu"
    assert MATRIX.resolve("rc").variant.index({}) == "https://download.pytorch.org/whl/test/cpu"
    cuda = MATRIX.resolve("nightly+cu130")
    assert (cuda.variant.name, cuda.variant.local_tag, cuda.variant.family) == ("nightly-cu130", "cu130", "cuda")
    assert MATRIX.resolve("nightly", variant="cu130") == cuda
    # Until its index is asked, a channel's build has the next release's facts: the newest series'.
    assert nightly.release.pythons == NEWEST.pythons and nightly.release.requirements == NEWEST.requirements
    assert not MATRIX.resolve("2.13.0+cpu").pending


def test_a_channel_build_and_the_release_of_its_number_are_apart() -> None:
    """A candidate carries the final number: only its variant tells it from the release."""
    release = MATRIX.resolve(NEWEST.version + "+cpu")
    candidate = MATRIX.pinned(MATRIX.resolve("rc"), NEWEST.version + "+cpu")
    assert candidate.torch_version == release.torch_version and not candidate.pending
    assert candidate.release == release.release  # the release's facts: its Pythons, its pins
    assert candidate.variant.name != release.variant.name
    assert Spec(candidate, "3.12").name != Spec(release, "3.12").name
    assert records.env_file_name(candidate.torch_version, candidate.variant.name, "3.12") == (
        "torch-%s+cpu_test-cpu_py3.12.jsonl" % NEWEST.version
    )


def test_selections_mix_channels_and_releases_in_order() -> None:
    chosen = MATRIX.select(["latest", "nightly", "nightly:2026-01-15", "rc", "nightly"], variant="cpu")
    assert [b.label for b in chosen] == [
        NEWEST.version + "+cpu", "nightly+cpu", "nightly:2026-01-15+cpu", "test+cpu"
    ]  # fmt: skip


def test_a_session_names_its_build_by_the_word_and_gets_it_back() -> None:
    for word in ("nightly", "nightly:2026-01-15", "rc", "test+cu130", "2.13.0+cpu", "2.6"):
        build = MATRIX.resolve(word)
        assert MATRIX.build(build.release.version, build.variant.name) == build
    # A record's version with its channel's variant is that channel's build (a repro, a check of one cell).
    pinned = MATRIX.build("2.16.0.dev20260115", "nightly-cpu")
    assert (pinned.torch_version, pinned.variant.name, pinned.pending) == (
        "2.16.0.dev20260115+cpu",
        "nightly-cpu",
        False,
    )
    assert MATRIX.resolve("2.16.0.dev20260115+cpu", "nightly-cpu") == pinned


@pytest.mark.parametrize(
    "word, variant, message",
    [
        ("nightlies", None, "unknown torch selection word 'nightlies'; known words: quick, aoti, all, latest, nightly"),
        ("nightly:2026-13-01", None, "nightly:2026-13-01: a dated nightly is nightly:YYYY-MM-DD"),
        ("nightly:yesterday", None, "a dated nightly is nightly:YYYY-MM-DD"),
        ("rc:2026-01-15", None, "the test channel has no dated builds"),
        ("beta:2026-01-15", None, "unknown channel 'beta' in beta:2026-01-15; known words:"),
        ("nightly+cu118", None, "nightly\\+cu118: the nightly channel has no cu118 index; it has: cpu,"),
        ("nightly", "pypi", "the nightly channel has no PyPI build"),
        ("nightly+cpu", "cu130", "is a \\+cpu build but --variant cu130"),
        ("2.6", "nightly-cpu", "nightly-cpu is the nightly channel's variant; name its builds by the channel's word"),
    ],
)
def test_bad_words_say_which_word_and_what_is_known(word: str, variant: Optional[str], message: str) -> None:
    with pytest.raises(ReleaseError, match=message) as raised:
        MATRIX.resolve(word, variant)
    assert "\n" not in str(raised.value)


def test_the_release_range_of_a_bisection_has_no_channel() -> None:
    with pytest.raises(ReleaseError, match="nightly channel's variant"):
        MATRIX.between("2.5.1", "2.9.1", MATRIX.variant("nightly-cpu"))


# --- the data ---------------------------------------------------------------------------------


def test_each_channel_index_is_a_variant_named_by_channel_and_variant() -> None:
    assert {"nightly", "test"} <= set(CHANNELS) and CHANNELS["test"].aliases == ("rc",)
    assert CHANNELS["nightly"].dated and not CHANNELS["test"].dated
    for channel in MATRIX.channels:
        assert channel.variants[0].name == channel.name + "-cpu"  # the default: a build every machine runs
        for variant in channel.variants:
            base = MATRIX.variant(variant.name[len(channel.name) + 1 :])
            assert variant.name == "%s-%s" % (channel.name, base.name)
            assert (variant.local_tag, variant.cuda, variant.channel) == (base.local_tag, base.cuda, channel.name)
            assert variant.env == "EXPORT_MATRIX_INDEX_URL_" + variant.name.upper().replace("-", "_")
            assert variant.index_url.startswith("https://download.pytorch.org/whl/%s/" % channel.name)
            assert variant.index_url.endswith("/" + base.name)
            assert MATRIX.variant(variant.name) == variant


GOOD = """
[[series]]
minor = "2.1"
patches = ["2.1.0"]
pythons = ["3.11"]

[variants.pypi]
index_url = "https://pypi.org/simple"
env = "X_PYPI"

[variants.cpu]
index_url = "https://example/cpu"
env = "X_CPU"
local_tag = "cpu"

[channels.nightly]
dated = true
indexes = { cpu = "https://example/nightly/cpu" }

[selections]
quick = ["2.1"]
matrix = []
"""


@pytest.mark.parametrize(
    "change, message",
    [
        (("dated = true", "dated = true\nmirror = 1"), r"\[channels.nightly\]: unknown keys \['mirror'\]"),
        (("{ cpu =", "{ pypi ="), "'pypi' is not a variant with an index of its own; known: cpu"),
        (("[channels.nightly]", "[channels.latest]"), "'latest' cannot be a channel's word"),
        (("dated = true", 'aliases = ["quick"]'), "'quick' cannot be a channel's word"),
        (('indexes = { cpu = "https://example/nightly/cpu" }', "indexes = {}"), "`indexes` must map variants"),
    ],
)
def test_malformed_channels_are_refused_naming_the_table(tmp_path: Path, change: tuple, message: str) -> None:
    assert releases.load(write(tmp_path / "ok.toml", GOOD)).resolve("nightly").variant.name == "nightly-cpu"
    with pytest.raises(ReleaseError, match=message):
        releases.load(write(tmp_path / "releases.toml", GOOD.replace(*change)))


# --- where a channel's builds come from ----------------------------------------------------------


def test_an_index_is_replaced_by_its_variable_or_a_uv_index_of_its_name(tmp_path: Path) -> None:
    variant = MATRIX.variant("nightly-cpu")
    quiet = {"UV_NO_CONFIG": "1"}
    assert variant.index(quiet) == variant.index_url and not variant.overridden(quiet)
    assert variant.index({**quiet, "UV_INDEX": "other=file:///o nightly-cpu=file:///uv"}) == "file:///uv"
    assert variant.index(
        {"EXPORT_MATRIX_INDEX_URL_NIGHTLY_CPU": "file:///m", "UV_INDEX": "nightly-cpu=file:///uv"}
    ) == ("file:///m")  # this project's variable first
    config = write(tmp_path / "uv.toml", '[[index]]\nname = "nightly-cpu"\nurl = "file:///toml"\n')
    assert variant.index({"UV_CONFIG_FILE": str(config)}) == "file:///toml"
    assert variant.overridden({"UV_CONFIG_FILE": str(config)})
    assert variant.index({"UV_CONFIG_FILE": str(config), "UV_NO_CONFIG": "1"}) == variant.index_url
    user = write(tmp_path / "home" / ".config" / "uv" / "uv.toml", '[[index]]\nname = "cpu"\nurl = "file:///user"\n')
    assert (
        MATRIX.variant("cpu").index({"HOME": str(user.parents[2]), "XDG_CONFIG_DIRS": str(tmp_path)}) == "file:///user"
    )
    # PyPI's build stays on the default index, whatever uv names "pypi".
    assert MATRIX.variant("pypi").index({"UV_INDEX": "pypi=file:///x"}) == "https://pypi.org/simple"
    assert uvconfig.from_variable("https://a/simple b=file:///b b=file:///c") == {"b": "file:///b"}


def test_a_channel_build_installs_torch_from_its_index_first_and_alone() -> None:
    pip = pipconfig.PipConfig(
        index_url="https://mirror.example/simple",
        extra_index_urls=("file:///extra",),
        find_links=("/w",),
        no_index=True,
    )
    build = MATRIX.pinned(MATRIX.resolve("nightly"), "2.16.0.dev20260115+cpu")
    sources = Sources.for_build(build, {"PIP_CONFIG_FILE": os.devnull, "UV_NO_CONFIG": "1"})
    assert sources.channel == ("nightly-cpu", "https://download.pytorch.org/whl/nightly/cpu")
    with_pip = Sources(dataclasses.replace(pip, find_links=(), no_index=False), channel=sources.channel)
    # uv's first-index strategy, whatever the environment says: torch from the channel, no release of its number.
    assert with_pip.uv_args({"UV_INDEX_STRATEGY": "unsafe-best-match"}) == [
        "--index-strategy", "first-index",
        "--index", "nightly-cpu=https://download.pytorch.org/whl/nightly/cpu",
        "--refresh-package", "torch",
        "--default-index", "https://mirror.example/simple",
        "--index", "file:///extra",
    ]  # fmt: skip
    assert with_pip.pip_args() == ["--extra-index-url", "https://download.pytorch.org/whl/nightly/cpu"]
    assert Spec(build, "3.12").torch_requirement == "torch==2.16.0.dev20260115+cpu"


def test_local_wheel_folders_are_left_out_for_a_channel_build(tmp_path: Path) -> None:
    conf = write(
        tmp_path / "pip.conf", "[global]\nfind-links = /releases\nno-index = true\nextra-index-url = file:///x\n"
    )
    environ = {"PIP_CONFIG_FILE": str(conf), "UV_NO_CONFIG": "1", "HOME": str(tmp_path)}
    channel = Sources.for_build(MATRIX.resolve("rc"), environ)
    assert channel.pip.find_links == () and not channel.pip.no_index and channel.pip.extra_index_urls == ("file:///x",)
    release = Sources.for_build(MATRIX.resolve(NEWEST.version + "+cpu"), environ)
    assert release.pip.find_links == ("/releases",) and release.channel is None


def test_uv_asks_a_channel_index_online_and_a_release_offline_first(monkeypatch: pytest.MonkeyPatch) -> None:
    commands: List[List[str]] = []

    def run(command: List[str], env: Optional[Dict[str, str]] = None, echo: object = None) -> object:
        commands.append(command)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(install, "run_captured", run)
    uv = install.UvInstaller("uv")
    uv.install(Path("/e/bin/python"), ["torch==9.9.9+cpu"], Sources(channel=("nightly-cpu", "file:///n")))
    uv.install(Path("/e/bin/python"), ["torch==9.9.9+cpu"], Sources(torch_index="file:///cpu"))
    assert ["--offline" in command for command in commands] == [False, True]
    assert commands[0][:4] == ["uv", "pip", "install", "--index-strategy"]


# --- what a channel's index offers --------------------------------------------------------------


def test_the_newest_build_for_this_python_or_the_one_of_a_day(tmp_path: Path) -> None:
    index = simple_index(
        tmp_path, {"torch": ["9.9.10.dev20260115+cpu", "9.9.10.dev20260116+cpu", "9.9.10.dev20260117"]}
    )
    nightly = fake_channel(index)
    newest = channels.offered(nightly, CURRENT, {})
    assert (newest.version, newest.day) == ("9.9.10.dev20260116+cpu", datetime.date(2026, 1, 16))  # +cpu only
    assert newest.wheel == "torch-9.9.10.dev20260116+cpu-py3-none-any.whl#sha256=" + "ab" * 32
    assert channels.offered(dated(nightly, "2026-01-15"), CURRENT, {}).version == "9.9.10.dev20260115+cpu"
    pinned = MATRIX.pinned(nightly, newest.version)
    assert (pinned.torch_version, pinned.release.pythons, pinned.release.minor) == (newest.version, (CURRENT,), "9.9")


def test_wheels_for_another_python_or_platform_are_not_offered() -> None:
    listed = [
        ("torch-9.9.11.dev20260118+cpu-cp30-cp30-manylinux_2_28_x86_64.whl", None),
        ("torch-9.9.11.dev20260118+cpu-%s-%s-win_arm64.whl" % (TAG, TAG), None),
        ("torch-9.9.10.dev20260117+cpu-py3-none-any.whl", None),
        ("torchvision-0.9.dev20260118+cpu-py3-none-any.whl", None),
        ("torch-9.9.10.tar.gz", None),
    ]
    if sys.platform == "win32":
        listed.pop(1)
    assert [o.version for o in channels.offers(listed, CURRENT)] == ["9.9.10.dev20260117+cpu"]


def test_pages_are_read_as_html_or_json_without_yanked_files() -> None:
    page = (
        '<a href="https://files/torch-1.0%2Bcpu-py3-none-any.whl#sha256=00ff">x</a>'
        '<a href="../torch-0.9-py3-none-any.whl" data-yanked="broken">y</a>'
    )
    assert channels.files(page, "text/html") == [("torch-1.0+cpu-py3-none-any.whl", "00ff")]
    data = {
        "files": [
            {"filename": "torch-1.0-py3-none-any.whl", "hashes": {"sha256": "aa"}},
            {"filename": "x", "yanked": True},
        ]
    }
    assert channels.files(json.dumps(data), "application/vnd.pypi.simple.v1+json") == [
        ("torch-1.0-py3-none-any.whl", "aa")
    ]


def test_each_failure_is_one_line_naming_the_word_the_channel_and_the_index(tmp_path: Path) -> None:
    index = simple_index(tmp_path / "n", {"torch": ["9.9.10.dev20260115+cpu", "9.9.10.dev20260120+cpu"]})
    gone = dated(fake_channel(index), "2026-01-01")
    with pytest.raises(ChannelUnavailable) as raised:
        channels.offered(gone, CURRENT, {})
    assert str(raised.value) == (
        "nightly:2026-01-01+cpu (the nightly channel's index %s): no build of 2026-01-01 for Python %s (the index"
        " no longer has it, or never had); it has 2026-01-15 to 2026-01-20" % (index, CURRENT)
    )
    silent = (tmp_path / "nowhere").as_uri()
    with pytest.raises(
        ChannelUnavailable,
        match="^nightly\\+cpu \\(the nightly channel's index %s\\): the index answers nothing: " % silent,
    ):
        channels.offered(fake_channel(silent), CURRENT, {})
    empty = tmp_path / "empty" / "simple"
    write(empty / "torch" / "index.html", "<html><body></body></html>")
    with pytest.raises(ChannelUnavailable, match="answers nothing: its page for torch lists no wheel"):
        channels.offered(fake_channel(empty.as_uri(), "test"), CURRENT, {})
    other = simple_index(tmp_path / "o", {"torch": ["9.9.10.dev20260115+cu130"]})
    with pytest.raises(ChannelUnavailable, match="none of its 1 torch wheels is a \\+cpu build for Python"):
        channels.offered(fake_channel(other), CURRENT, {})


def test_a_channel_that_cannot_be_had_is_an_env_error_of_that_build_alone(tmp_path: Path) -> None:
    index = simple_index(tmp_path / "n", {"torch": ["9.9.10.dev20260115+cpu"]})
    gone = Spec(dated(fake_channel(index), "2026-01-01"), CURRENT)
    tool, out = FailingInstaller(), tmp_path / "out"
    assert env_errors.prepare_or_record(gone, out, tmp_path / "envs", tool, log=lambda _: None) is None
    assert tool.calls == []  # nothing was installed: the index said no first
    # The record keeps the word; its file's name holds no colon (Windows, artifact names).
    assert [p.name for p in out.iterdir()] == [
        "env-error_torch-nightly-2026-01-01+cpu_nightly-cpu_py%s.jsonl" % CURRENT
    ]
    ((record,), _) = records.read(str(out / env_errors.env_error_file(gone)))
    assert (record["torch_version"], record["variant"]) == ("nightly:2026-01-01+cpu", "nightly-cpu")
    assert record["error_type"] == "matrix.envs.channels.ChannelUnavailable"
    assert "nightly channel's index %s" % index in record["error_message"] and "2026-01-01" in record["error_message"]


def test_every_name_a_dated_word_gives_a_file_or_folder_is_safe_and_a_release_keeps_its_name() -> None:
    word = Spec(MATRIX.resolve("nightly:2026-01-15"), "3.12", "transformers")
    assert word.name == "torch-nightly-2026-01-15+cpu_nightly-cpu_py3.12" + word.name[len(word.base.name) :]
    assert word.name.startswith(word.base.name + "_deps-")
    assert env_errors.env_error_file(word.base) == "env-error_torch-nightly-2026-01-15+cpu_nightly-cpu_py3.12.jsonl"
    assert logs.log_path(Path("out"), word.name).name == word.name + ".log"  # the nox sessions' logs
    assert all(options.is_safe_name(name) for name in (word.name, env_errors.env_error_file(word)))
    # Names that were safe stay as they were: environments, records and caches made before are found again.
    assert Spec(MATRIX.resolve("2.7.1+cpu"), "3.12").name == "torch-2.7.1+cpu_cpu_py3.12"
    assert Spec(MATRIX.resolve("nightly"), "3.12").name == "torch-nightly+cpu_nightly-cpu_py3.12"


def test_the_environments_of_a_channel_word_are_every_build_of_it_installed(tmp_path: Path) -> None:
    envs = tmp_path / "envs"
    names = [
        "torch-2.16.0.dev20260115+cpu_nightly-cpu_py3.12",
        "torch-2.16.0.dev20260116+cpu_nightly-cpu_py3.11_deps-0123abcd",
        "torch-2.16.0.dev20260116+cpu_nightly-cu130_py3.12",
        "torch-2.15.0+cpu_cpu_py3.12",
        "torch-2.15.0+cpu_test-cpu_py3.12",
    ]
    for name in names:
        (envs / name).mkdir(parents=True)
    found = [p.name for p in environments.of_build(MATRIX.resolve("nightly"), envs)]
    assert found == names[:2]
    assert [p.name for p in environments.of_build(MATRIX.resolve("nightly:2026-01-16"), envs)] == [names[1]]
    assert [p.name for p in environments.of_build(MATRIX.resolve("rc"), envs)] == [names[4]]
    assert [p.name for p in environments.of_build(MATRIX.resolve("2.15.0+cpu"), envs)] == [names[3]]


def test_a_nightly_pairs_with_the_same_night_of_a_compiled_companion() -> None:
    table = companions.load()
    nightly = MATRIX.pinned(MATRIX.resolve("nightly"), "2.16.0.dev20260115+cpu")
    assert companions.compiled_builds(nightly, table) == ("torchvision==0.31.0.dev20260115+cpu",)
    assert companions.compiled_builds(MATRIX.resolve("nightly"), table) == ()  # not pinned yet: nothing to pair


# --- the sessions ---------------------------------------------------------------------------------


def noxfile_module():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT))
    import noxfile

    return noxfile


def test_the_run_sessions_of_channel_words(monkeypatch: pytest.MonkeyPatch) -> None:
    noxfile = noxfile_module()
    monkeypatch.setenv(noxfile.SELECTION_VARIABLE, "latest nightly nightly:2026-01-15 rc+cu130")
    params = {(p.args[0], p.args[1]): p.tags for p in noxfile._params()}
    assert "latest" in params.pop((NEWEST.version, "pypi"))  # the newest release, never a channel's build
    assert params == {
        ("nightly", "nightly-cpu"): ["cpu", "nightly"],
        ("nightly:2026-01-15", "nightly-cpu"): ["cpu", "nightly"],
        ("test", "test-cu130"): ["cuda", "test"],
    }


def test_a_bad_word_stops_the_session_list_with_one_line_and_status_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    noxfile = noxfile_module()
    monkeypatch.setenv(noxfile.SELECTION_VARIABLE, "2.6 nightly:2026-02-30")
    with pytest.raises(SystemExit) as raised:
        noxfile._builds()
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nightly:2026-02-30: a dated nightly is nightly:YYYY-MM-DD" in err
