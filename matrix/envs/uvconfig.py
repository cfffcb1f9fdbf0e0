"""uv's named indexes (``UV_INDEX``, ``[[index]]`` in uv.toml): where a user already told uv a variant's builds are.

A variant whose name a uv index bears (``UV_INDEX="nightly-cpu=file:///mirror/nightly/cpu"``)
takes its builds from there (``releases.Variant.index``). Read as uv reads them: the file
``UV_CONFIG_FILE`` names, else the system's and the user's ``uv.toml`` (the user's wins), none
under ``UV_NO_CONFIG``; ``UV_INDEX`` wins over every file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, List, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python < 3.11
    import tomli as tomllib

TRUE = {"1", "true", "yes", "on", "y"}


def config_files(environ: Mapping[str, str]) -> List[Path]:
    """uv's configuration files, lowest precedence first (project files are the project's, not this tool's)."""
    if (environ.get("UV_NO_CONFIG") or "").strip().lower() in TRUE:
        return []
    if environ.get("UV_CONFIG_FILE"):
        return [Path(environ["UV_CONFIG_FILE"])]
    found = [
        Path(folder) / "uv" / "uv.toml"
        for folder in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep)
        if folder
    ]
    found.append(Path("/etc/uv/uv.toml"))
    home = Path(environ.get("HOME") or Path.home())
    found.append(Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / "uv" / "uv.toml")
    return found


def _from_file(path: Path) -> Dict[str, str]:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # uv itself says what is wrong with its own file
    entries = data.get("index")
    if not isinstance(entries, list):
        return {}
    return {
        str(entry["name"]): str(entry["url"])
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("url"), str)
    }


def from_variable(value: str) -> Dict[str, str]:
    """``UV_INDEX``'s named entries: space-separated ``name=url`` (an unnamed URL names nothing)."""
    found: Dict[str, str] = {}
    for entry in value.split():
        name, equals, url = entry.partition("=")
        if equals and "://" not in name and url:
            found.setdefault(name, url)  # uv takes the first of two entries of one name
    return found


def named_indexes(environ: Mapping[str, str]) -> Dict[str, str]:
    """Every index uv's configuration names, by name."""
    found: Dict[str, str] = {}
    for path in config_files(environ):
        if path.is_file():
            found.update(_from_file(path))
    found.update(from_variable(environ.get("UV_INDEX") or ""))
    return found
