"""The packages a cell's dependency set names, and the versions its environment resolved for them.

A cell record carries its set (``dependency_set``: the case's PEP 723 requirements and every
``--with``) and the part ``--with`` added (``with_set``); the store joins each cell with its
run's environment record, which lists every package the set added to torch
(``added_packages``, the named ones and what they pulled in).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from matrix.contract import dependencies


def normalized(name: str) -> str:
    """A distribution name as compared (PEP 503): ``Huggingface_Hub`` -> ``huggingface-hub``."""
    return dependencies.name_of(name) or name.lower()


def requirements(key: Any) -> Tuple[str, ...]:
    """The requirements of a set key (``"timm + torchvision"``); none for "" or anything but text."""
    return dependencies.key_requirements(key) if isinstance(key, str) else ()


def declared(dependency_set: Any, with_set: Any) -> Tuple[str, ...]:
    """The case's own requirements (its PEP 723 block): the set less what ``--with`` added."""
    added = set(requirements(with_set))
    return tuple(r for r in requirements(dependency_set) if r not in added)


def names(dependency_set: Any) -> List[str]:
    """The distributions a set names, normalized, in the set's order."""
    found = [dependencies.name_of(r) for r in requirements(dependency_set)]
    return list(dict.fromkeys(name for name in found if name))


def resolved(added: Any) -> Dict[str, str]:
    """An environment's added packages keyed by normalized name; {} where none are known."""
    if not isinstance(added, dict):
        return {}
    return {normalized(str(name)): str(version) for name, version in added.items()}


def named_versions(dependency_set: Any, added: Any) -> List[Tuple[str, Optional[str]]]:
    """Each package the set names and the version its environment resolved (None: not installed or not known)."""
    versions = resolved(added)
    return [(name, versions.get(name)) for name in names(dependency_set)]


def describe(dependency_set: Any, added: Any) -> str:
    """``transformers 4.57.6, timm 1.0.31`` (plain text); a package without a known version shows ``–``."""
    return ", ".join("%s %s" % (name, version or "–") for name, version in named_versions(dependency_set, added))
