"""Parsed record files kept next to them, so that a report over the same records does not parse them again.

A record file's parse is stored in ``.export-matrix-cache/`` beside it, keyed by the file's
path, size, modification time and a hash of its first and last 64 KiB, and by the code
that parsed it. Any change to the file or to that code makes a new parse. Cache files are
pickles signed with a secret kept in the user's cache folder: a cache file that someone
else wrote (a downloaded results folder) fails the signature and is ignored, never
unpickled. A folder that cannot be written just goes without a cache.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import secrets
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional, Tuple, TypeVar

T = TypeVar("T")

FOLDER = ".export-matrix-cache"
DISABLE_VARIABLE = "EXPORT_MATRIX_NO_CACHE"
_EDGE = 64 * 1024
_DIGEST = hashlib.sha256().digest_size


def _secret() -> bytes:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "torch-export-matrix"
    path = base / "cache-secret"
    try:
        data = path.read_bytes()
        if len(data) == 32:
            return data
    except OSError:
        pass
    base.mkdir(parents=True, exist_ok=True)
    data = secrets.token_bytes(32)
    fd, temporary = tempfile.mkstemp(dir=base)
    with os.fdopen(fd, "wb") as f:  # mkstemp makes it readable by this user only
        f.write(data)
    try:
        os.link(temporary, path)  # the first writer wins; others read its secret
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)
    data = path.read_bytes()
    if len(data) != 32:
        raise OSError("%s is not a cache secret" % path)
    return data


def file_key(path: str, code: bytes) -> bytes:
    """What the parse of ``path`` depends on: the file as it is now, and the code that parses it."""
    stat = os.stat(path)
    digest = hashlib.sha256(code)
    digest.update(("%s\0%d\0%d\0" % (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)).encode())
    with open(path, "rb") as f:
        digest.update(f.read(_EDGE))
        if stat.st_size > 2 * _EDGE:
            f.seek(-_EDGE, os.SEEK_END)
        digest.update(f.read(_EDGE))
    return digest.digest()


def cache_path(path: str) -> str:
    folder, name = os.path.split(path)
    return os.path.join(folder, FOLDER, name + ".pickle")


def _verified(path: str, key: bytes) -> Optional[bytes]:
    """The cached body for ``key``, when the cache file is ours (signed) and current."""
    if os.environ.get(DISABLE_VARIABLE):
        return None
    try:
        with open(cache_path(path), "rb") as f:
            blob = f.read()
        signature, stored_key, body = blob[:_DIGEST], blob[_DIGEST : 2 * _DIGEST], blob[2 * _DIGEST :]
        expected = hmac.new(_secret(), stored_key + body, hashlib.sha256).digest()
    except OSError:
        return None
    if not hmac.compare_digest(signature, expected) or stored_key != key:
        return None
    return body


def is_cached(path: str, code: bytes) -> bool:
    """Whether ``path`` likely has a current parse in the cache: its key matches; the signature is checked on loading.

    Reads the cache file's head only: it decides how to load (in side processes or not),
    not what to trust.
    """
    if os.environ.get(DISABLE_VARIABLE):
        return False
    try:
        with open(cache_path(path), "rb") as f:
            head = f.read(2 * _DIGEST)
    except OSError:
        return False
    return head[_DIGEST:] == file_key(path, code)


def load(path: str, code: bytes) -> Tuple[Optional[Any], bytes]:
    """The cached parse of ``path`` if there is a valid one, and the file's key."""
    key = file_key(path, code)
    body = _verified(path, key)
    return (None if body is None else pickle.loads(body)), key


def store(path: str, key: bytes, value: Any) -> None:
    """Keep ``value`` as the parse of ``path``; silently nothing where the folder cannot be written."""
    if os.environ.get(DISABLE_VARIABLE):
        return
    try:
        target = cache_path(path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        signature = hmac.new(_secret(), key + body, hashlib.sha256).digest()
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(target))
        with os.fdopen(fd, "wb") as f:
            f.write(signature + key + body)
        os.replace(temporary, target)
    except OSError:
        pass


def cached(path: str, parse: Callable[[str], T], code: bytes) -> T:
    """``parse(path)``, from the cache when the file and ``code`` are unchanged."""
    value, key = load(path, code)
    if value is None:
        value = parse(path)
        store(path, key, value)
    return value  # type: ignore[no-any-return]
