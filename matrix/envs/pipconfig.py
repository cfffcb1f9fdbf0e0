"""pip's configuration, read the way ``pip install`` reads it, and translated for uv.

uv ignores pip's configuration, so a machine whose indexes, mirrors or local wheel
folders are set up for pip (pip.conf, ``PIP_*`` variables) would install different
wheels, or none, through uv. This module reads the index options pip would use and turns
them into uv command-line flags and environment variables.
"""

from __future__ import annotations

import configparser
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from matrix.contract.errors import UserError

TRUE = {"1", "true", "yes", "on", "y"}
IGNORE_VARIABLE = "EXPORT_MATRIX_IGNORE_PIP_CONFIG"


class PipConfigError(UserError):
    """A pip configuration file that cannot be parsed; the message names it."""


@dataclass(frozen=True)
class PipConfig:
    """The index options ``pip install`` would use."""

    index_url: Optional[str] = None
    extra_index_urls: Tuple[str, ...] = ()
    find_links: Tuple[str, ...] = ()
    no_index: bool = False
    trusted_hosts: Tuple[str, ...] = ()
    cert: Optional[str] = None
    timeout: Optional[str] = None
    files: Tuple[str, ...] = ()  # the configuration files that were read, for messages

    def uv_args(self) -> List[str]:
        """uv flags with the same meaning: pip's index is uv's default index, its extra indexes uv's indexes."""
        args: List[str] = []
        if self.index_url:
            args += ["--default-index", self.index_url]
        for url in self.extra_index_urls:
            args += ["--index", url]
        for location in self.find_links:
            args += ["--find-links", location]
        if self.no_index:
            args.append("--no-index")
        for host in self.trusted_hosts:
            args += ["--allow-insecure-host", host]
        return args

    def uv_env(self, environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        """Variables for uv's process: pip's certificate bundle and timeout, unless uv's own are set."""
        environ = os.environ if environ is None else environ
        env: Dict[str, str] = {}
        if self.cert and "SSL_CERT_FILE" not in environ:
            env["SSL_CERT_FILE"] = self.cert
        if self.timeout and "UV_HTTP_TIMEOUT" not in environ:
            env["UV_HTTP_TIMEOUT"] = self.timeout
        return env


def _config_name() -> str:
    return "pip.ini" if sys.platform == "win32" else "pip.conf"


def config_files(
    environ: Mapping[str, str], home: Optional[Path] = None, prefix: Optional[str] = None
) -> List[Tuple[str, Path]]:
    """pip's configuration files as (kind, path), lowest precedence first.

    Kinds follow pip: global, user and site files, then the file named by
    ``PIP_CONFIG_FILE`` (which also hides the user files when it exists).
    """
    home = Path(environ.get("HOME") or Path.home()) if home is None else home
    prefix = sys.prefix if prefix is None else prefix
    name = _config_name()
    env_file = environ.get("PIP_CONFIG_FILE")
    if env_file is not None and env_file == os.devnull:
        return []  # pip's documented way to load no configuration files at all
    found: List[Tuple[str, Path]] = []
    if sys.platform == "win32":
        program_data = environ.get("PROGRAMDATA", r"C:\ProgramData")
        found.append(("global", Path(program_data) / "pip" / name))
    elif sys.platform == "darwin":
        found.append(("global", Path("/Library/Application Support/pip") / name))
    else:
        for folder in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep):
            if folder:
                found.append(("global", Path(folder) / "pip" / name))
        found.append(("global", Path("/etc") / name))
    if not (env_file and os.path.exists(env_file)):
        found.append(("user", home / ("pip" if sys.platform == "win32" else ".pip") / name))
        if sys.platform == "win32":
            found.append(("user", Path(environ.get("APPDATA") or home) / "pip" / name))
        elif sys.platform == "darwin" and (home / "Library/Application Support/pip").is_dir():
            found.append(("user", home / "Library/Application Support/pip" / name))
        else:
            config_home = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
            found.append(("user", config_home / "pip" / name))
    found.append(("site", Path(prefix) / name))
    if env_file:
        found.append(("env", Path(env_file)))
    return found


def _read_file(path: Path) -> Dict[str, str]:
    """``section.option`` -> value for one file, option names normalized as pip does."""
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as exc:
        raise PipConfigError("%s: cannot parse pip configuration: %s" % (path, exc))
    values: Dict[str, str] = {}
    for section in parser.sections():
        for option, value in parser.items(section):
            values["%s.%s" % (section, option.replace("_", "-").lower())] = value
    return values


def load(
    environ: Optional[Mapping[str, str]] = None,
    home: Optional[Path] = None,
    prefix: Optional[str] = None,
    command: str = "install",
) -> PipConfig:
    """The index options ``pip <command>`` would use, with pip's precedence.

    Files are read lowest precedence first and a later file replaces an option an earlier
    one set; then the ``[<command>]`` section overrides ``[global]``, and ``PIP_*``
    variables override both.
    """
    environ = os.environ if environ is None else environ
    merged: Dict[str, str] = {}
    read: List[str] = []
    for _kind, path in config_files(environ, home, prefix):
        if path.is_file():
            merged.update(_read_file(path))
            read.append(str(path))
    options: Dict[str, str] = {}
    # pip skips empty values: an empty PIP_FIND_LINKS does not clear a file's find-links.
    for section in ("global", command):
        for key, value in merged.items():
            name = key.split(".", 1)
            if name[0] == section and value.strip():
                options[name[1]] = value
    for variable, value in environ.items():
        if variable.startswith("PIP_") and variable != "PIP_CONFIG_FILE" and value.strip():
            options[variable[4:].lower().replace("_", "-")] = value
    return _from_options(options, tuple(read))


def _split(value: Optional[str]) -> Tuple[str, ...]:
    return tuple(value.split()) if value else ()


def _from_options(options: Mapping[str, str], files: Sequence[str]) -> PipConfig:
    timeout = options.get("timeout") or options.get("default-timeout")
    return PipConfig(
        index_url=(options.get("index-url") or "").strip() or None,
        extra_index_urls=_split(options.get("extra-index-url")),
        find_links=_split(options.get("find-links")),
        no_index=(options.get("no-index") or "").strip().lower() in TRUE,
        trusted_hosts=_split(options.get("trusted-host")),
        cert=(options.get("cert") or "").strip() or None,
        timeout=(timeout or "").strip() or None,
        files=tuple(files),
    )


def current(environ: Optional[Mapping[str, str]] = None) -> PipConfig:
    """pip's configuration on this machine, or an empty one when ``EXPORT_MATRIX_IGNORE_PIP_CONFIG`` is set."""
    environ = os.environ if environ is None else environ
    if (environ.get(IGNORE_VARIABLE) or "").strip().lower() in TRUE:
        return PipConfig()
    return load(environ)
