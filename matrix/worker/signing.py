"""Signatures of saved programs: ``run --artifacts`` signs each one, ``load`` refuses what it cannot verify.

Loading a saved program runs code from its folder: ``torch.export.load`` unpickles on some
releases, and ``load`` imports the case module a program names. A folder of programs made
by someone else would run their code in every release that loads it. So each artifact's
``meta.json`` is signed with HMAC-SHA256 into ``meta.sig`` beside it. ``meta.json`` lists the
size and sha256 of every other file, which ``load`` checks before reading any of them, so
the signature covers the whole artifact: whoever lacks the key can rewrite those hashes,
but not sign them.

The key is the text of ``EXPORT_MATRIX_SIGNING_KEY`` where it is set (CI jobs of one
workflow share it from a secret), else the file ``torch-export-matrix/signing-key`` in the
user's cache folder (``$XDG_CACHE_HOME``, else ``~/.cache``), which the first signature
creates with a random key, readable by its owner only. The file holds the key as text, so
its content can be given to the variable elsewhere.

Standard library only, Python 3.8 syntax: this runs inside every torch environment.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
from typing import Any, Dict, Mapping, Optional, Tuple

from ..contract.errors import UserError
from ..contract.layout import META
from ..contract.requests import KEY_VARIABLE

KEY_FILE = "signing-key"
# A shorter key is too easy to guess; a random key of 32 bytes is 64 hex digits.
MIN_KEY_CHARS = 32
SCHEME = "hmac-sha256"


class SigningKeyError(UserError):
    """The signing key cannot be had: the message names the variable or file and what to do."""


def key_path(environ: Optional[Mapping[str, str]] = None) -> str:
    """Where the default key lives: the user's cache folder, as the parse cache keeps its secret."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "torch-export-matrix", KEY_FILE)


def _key_of(text: str, where: str) -> bytes:
    text = text.strip()
    if len(text) < MIN_KEY_CHARS:
        raise SigningKeyError(
            "%s: the signing key must have at least %d characters, e.g. the output of"
            ' `python -c "import secrets; print(secrets.token_hex(32))"`' % (where, MIN_KEY_CHARS)
        )
    return text.encode("utf-8")


def signing_key(environ: Optional[Mapping[str, str]] = None) -> bytes:
    """The key that signs: the variable's text, else the key file's, made with a random key if there is none.

    Raises SigningKeyError naming what is wrong.
    """
    key = _key(os.environ if environ is None else environ, create=True)
    assert key is not None  # made above
    return key


def verifying_key(environ: Optional[Mapping[str, str]] = None) -> Optional[bytes]:
    """The key that verifies: as :func:`signing_key`, but None where there is none (nothing was signed here)."""
    return _key(os.environ if environ is None else environ, create=False)


def _key(environ: Mapping[str, str], create: bool) -> Optional[bytes]:
    given = environ.get(KEY_VARIABLE, "")
    if given.strip():
        return _key_of(given, KEY_VARIABLE)
    path = key_path(environ)
    if not os.path.exists(path):
        if not create:
            return None
        _create(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, ValueError) as exc:
        raise SigningKeyError("signing key %s cannot be read: %s; set %s instead" % (path, exc, KEY_VARIABLE))
    return _key_of(text, "signing key %s" % path)


def _create(path: str) -> None:
    """Write a random key at ``path``, complete or not at all; of two processes, the first wins."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".signing-key-", dir=folder)  # readable by its owner only
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(secrets.token_hex(32) + "\n")
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(temporary, path)  # never replaces a key another process made meanwhile
            except FileExistsError:
                pass
        finally:
            os.unlink(temporary)
    except OSError as exc:
        raise SigningKeyError("cannot make the signing key %s: %s; set %s instead" % (path, exc, KEY_VARIABLE))


def signature_path(path: str) -> str:
    """Where the signature of ``path`` goes: ``meta.json`` is signed in ``meta.sig``."""
    return os.path.splitext(path)[0] + ".sig"


def _digest(key: bytes, data: bytes) -> str:
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def sign(path: str, key: bytes) -> str:
    """Sign the bytes of the file ``path`` into its signature file; returns that file's path."""
    with open(path, "rb") as f:
        data = f.read()
    signature = signature_path(path)
    with open(signature, "w", encoding="ascii") as f:
        f.write("%s %s\n" % (SCHEME, _digest(key, data)))
        f.flush()
        os.fsync(f.fileno())
    return signature


def signed_bytes(path: str, key: bytes) -> Tuple[Optional[bytes], Optional[str]]:
    """The bytes of ``path`` when its signature matches ``key``, else why not (one line).

    Whoever uses the content should use these bytes, not read the file again.
    """
    name, signature = os.path.basename(path), signature_path(path)
    if not os.path.isfile(signature):
        return None, "no signature (%s)" % os.path.basename(signature)
    try:
        with open(path, "rb") as f:
            data = f.read()
        with open(signature, "rb") as f:
            words = f.read(1024).decode("ascii").split()
    except (OSError, ValueError) as exc:
        return None, "%s or its signature cannot be read: %s" % (name, exc)
    if len(words) != 2 or words[0] != SCHEME:
        return None, "%s is not a %s signature" % (os.path.basename(signature), SCHEME)
    if not hmac.compare_digest(words[1], _digest(key, data)):
        return None, "the signature does not match the signing key (%s was changed, or signed with another key)" % name
    return data, None


def verify(path: str, key: bytes) -> Optional[str]:
    """Why the file ``path`` is not signed with ``key``, or None when it is."""
    return signed_bytes(path, key)[1]


def untrusted(folder: str, meta: Dict[str, Any], key: Optional[bytes]) -> Optional[str]:
    """Why an artifact's ``meta`` (read from ``folder``) is not known to be signed with ``key``; None when it is."""
    if key is None:
        return "no signing key here to check its signature (set %s to the key that signed it)" % KEY_VARIABLE
    data, problem = signed_bytes(os.path.join(folder, META), key)
    if problem is not None:
        return problem
    try:
        same = data is not None and json.loads(data.decode("utf-8")) == meta
    except ValueError:
        same = False
    # The signed bytes must be what the job will use: meta.json could have changed since discovery.
    return None if same else "%s changed while it was read" % META
