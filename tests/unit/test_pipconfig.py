"""pip's configuration read with pip's precedence and translated into uv's flags, from fake config files."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict

import pytest

from matrix.envs import pipconfig

from conftest import write


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def load(environ: Dict[str, str], home: Path, tmp_path: Path) -> pipconfig.PipConfig:
    # XDG_CONFIG_DIRS points into the test folder so the machine's /etc/xdg is not read;
    # the site file is the fake prefix's.
    environ = {"XDG_CONFIG_DIRS": str(tmp_path / "xdg"), **environ}
    return pipconfig.load(environ, home=home, prefix=str(tmp_path / "prefix"))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file locations")
def test_user_file_is_read_and_multi_value_options_split(tmp_path: Path, home: Path) -> None:
    write(
        home / ".config" / "pip" / "pip.conf",
        "[global]\nfind-links = /srv/wheels\nextra-index-url = file:///a/simple\n    file:///b/simple\n",
    )
    config = load({"PIP_CONFIG_FILE": str(tmp_path / "absent.conf")}, home, tmp_path)
    assert config.find_links == ("/srv/wheels",)
    assert config.extra_index_urls == ("file:///a/simple", "file:///b/simple")
    # uv's current flags: pip's extra indexes are uv's indexes (--extra-index-url is deprecated).
    assert config.uv_args() == [
        "--index", "file:///a/simple", "--index", "file:///b/simple", "--find-links", "/srv/wheels",
    ]  # fmt: skip


def test_install_section_overrides_global_and_variables_override_files(tmp_path: Path, home: Path) -> None:
    conf = write(
        tmp_path / "pip.conf",
        "[global]\nindex-url = https://mirror.example/simple\ntimeout = 5\n"
        "[install]\nindex_url = https://install.example/simple\n",
    )
    config = load({"PIP_CONFIG_FILE": str(conf)}, home, tmp_path)
    assert config.index_url == "https://install.example/simple"
    assert config.timeout == "5"
    config = load({"PIP_CONFIG_FILE": str(conf), "PIP_INDEX_URL": "https://env.example/simple"}, home, tmp_path)
    assert config.index_url == "https://env.example/simple"
    assert config.uv_args() == ["--default-index", "https://env.example/simple"]  # pip's index: uv's default


def test_config_file_variable_hides_user_file_and_overrides_site_file(tmp_path: Path, home: Path) -> None:
    write(home / ".config" / "pip" / "pip.conf", "[global]\nfind-links = /from/user\n")
    write(tmp_path / "prefix" / "pip.conf", "[global]\nfind-links = /from/site\ntrusted-host = site.example\n")
    conf = write(tmp_path / "env.conf", "[global]\nfind-links = /from/env\n")
    config = load({"PIP_CONFIG_FILE": str(conf)}, home, tmp_path)
    assert config.find_links == ("/from/env",)
    assert config.trusted_hosts == ("site.example",)
    assert str(home / ".config" / "pip" / "pip.conf") not in config.files
    assert config.uv_args()[-2:] == ["--allow-insecure-host", "site.example"]


def test_devnull_loads_no_file_but_variables_still_apply(tmp_path: Path, home: Path) -> None:
    write(home / ".config" / "pip" / "pip.conf", "[global]\nfind-links = /from/user\n")
    config = load({"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "yes", "PIP_FIND_LINKS": "/a /b"}, home, tmp_path)
    assert config.files == ()
    assert config.no_index is True
    assert config.find_links == ("/a", "/b")
    assert "--no-index" in config.uv_args()


def test_an_empty_variable_does_not_clear_a_file_value(tmp_path: Path, home: Path) -> None:
    conf = write(tmp_path / "pip.conf", "[global]\nfind-links = /srv/wheels\n")
    config = load({"PIP_CONFIG_FILE": str(conf), "PIP_FIND_LINKS": ""}, home, tmp_path)
    assert config.find_links == ("/srv/wheels",)


def test_certificate_and_timeout_become_uv_variables_unless_uv_has_its_own(tmp_path: Path, home: Path) -> None:
    conf = write(tmp_path / "pip.conf", "[global]\ncert = /etc/bundle.pem\ndefault-timeout = 60\n")
    config = load({"PIP_CONFIG_FILE": str(conf)}, home, tmp_path)
    assert config.uv_env({}) == {"SSL_CERT_FILE": "/etc/bundle.pem", "UV_HTTP_TIMEOUT": "60"}
    assert config.uv_env({"SSL_CERT_FILE": "/mine.pem"}) == {"UV_HTTP_TIMEOUT": "60"}


def test_a_broken_file_is_an_error_naming_it(tmp_path: Path, home: Path) -> None:
    conf = write(tmp_path / "pip.conf", "find-links = /no/section/header\n")
    with pytest.raises(pipconfig.PipConfigError, match="pip.conf"):
        load({"PIP_CONFIG_FILE": str(conf)}, home, tmp_path)


def test_ignore_variable_turns_translation_off(tmp_path: Path) -> None:
    conf = write(tmp_path / "pip.conf", "[global]\nfind-links = /srv/wheels\n")
    environ = {"PIP_CONFIG_FILE": str(conf), pipconfig.IGNORE_VARIABLE: "1"}
    assert pipconfig.current(environ) == pipconfig.PipConfig()
