"""Signed saved programs: :mod:`matrix.worker.signing`, and how ``load`` uses it, in process (``save``, which needs an
exported program: tests/integration/test_signing.py)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from matrix.contract import layout, schema
from matrix.contract.options import from_namespace
from matrix.worker import loader, signing

KEY = b"k" * 40
OTHER = b"o" * 40


def signed_meta(folder: Path, meta: Dict[str, Any]) -> Path:
    path = folder / layout.META
    path.write_text(json.dumps(meta))
    signing.sign(str(path), KEY)
    return path


def test_a_signed_file_verifies_with_its_key_only(tmp_path: Path) -> None:
    path = signed_meta(tmp_path, {"case": "a"})
    assert signing.signature_path(str(path)) == str(tmp_path / "meta.sig")
    assert signing.verify(str(path), KEY) is None
    assert signing.signed_bytes(str(path), KEY) == (path.read_bytes(), None)
    assert signing.verify(str(path), OTHER) == (
        "the signature does not match the signing key (meta.json was changed, or signed with another key)"
    )


def test_a_tampered_file_or_signature_fails_and_says_which(tmp_path: Path) -> None:
    path = signed_meta(tmp_path, {"case": "a", "files": [{"sha256": "1" * 64}]})
    signature = tmp_path / "meta.sig"
    # The attack: new hashes in meta.json, without the key to sign them.
    path.write_text(json.dumps({"case": "a", "files": [{"sha256": "2" * 64}]}))
    assert signing.signed_bytes(str(path), KEY) == (None, signing.verify(str(path), OTHER))
    assert "does not match the signing key" in str(signing.verify(str(path), KEY))
    # A signature made with another key over the new bytes fails too.
    signing.sign(str(path), OTHER)
    assert "does not match the signing key" in str(signing.verify(str(path), KEY))
    signing.sign(str(path), KEY)
    assert signing.verify(str(path), KEY) is None
    scheme, digest = signature.read_text().split()
    signature.write_text("%s %s\n" % (scheme, digest[:-1] + ("0" if digest[-1] != "0" else "1")))
    assert "does not match the signing key" in str(signing.verify(str(path), KEY))
    signature.write_text("md5 %s\n" % digest)
    assert signing.verify(str(path), KEY) == "meta.sig is not a hmac-sha256 signature"
    signature.write_bytes(b"\xff\xfe")
    assert "cannot be read" in str(signing.verify(str(path), KEY))
    signature.unlink()
    assert signing.verify(str(path), KEY) == "no signature (meta.sig)"


def test_the_key_is_the_variable_else_a_private_file_made_once(tmp_path: Path) -> None:
    environ = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    path = Path(signing.key_path(environ))
    assert path == tmp_path / "cache" / "torch-export-matrix" / "signing-key"
    assert signing.verifying_key(environ) is None and not path.exists()  # load makes no key
    key = signing.signing_key(environ)
    assert key is not None and len(key) == 64 and path.read_text().strip().encode() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert signing.signing_key(environ) == key and signing.verifying_key(environ) == key
    assert [p.name for p in path.parent.iterdir()] == ["signing-key"]  # no temporary file left
    # The key file's text given to the variable (with a newline, as secrets often are) is the same key.
    assert signing.signing_key({signing.KEY_VARIABLE: path.read_text()}) == key
    assert signing.signing_key(dict(environ, **{signing.KEY_VARIABLE: "x" * 32})) == b"x" * 32
    assert signing.signing_key(dict(environ, **{signing.KEY_VARIABLE: "  "})) == key  # blank: not set


def test_a_weak_or_unreadable_key_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(
        signing.SigningKeyError, match="EXPORT_MATRIX_SIGNING_KEY: the signing key must have at least 32"
    ):
        signing.signing_key({signing.KEY_VARIABLE: "short"})
    environ = {"XDG_CACHE_HOME": str(tmp_path)}
    path = Path(signing.key_path(environ))
    path.parent.mkdir(parents=True)
    path.write_text("abc\n")
    with pytest.raises(signing.SigningKeyError, match="signing key .*signing-key: the signing key must have"):
        signing.signing_key(environ)
    blocked = {"XDG_CACHE_HOME": str(tmp_path / "file")}
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(signing.SigningKeyError, match="cannot make the signing key .*; set EXPORT_MATRIX_SIGNING_KEY"):
        signing.signing_key(blocked)


# --- load: the check before anything is read -------------------------------------------------


def artifact_here(tmp_path: Path) -> Tuple[layout.Artifact, Dict[str, Any]]:
    env = layout.env_folder("2.5.1", "cpu", "3.11")
    folder = tmp_path / env / "strict" / "lin"
    folder.mkdir(parents=True)
    meta = {"format_version": layout.FORMAT_VERSION, "case": "lin", "mode": "strict", "torch_version": "2.5.1",
            "variant": "cpu", "python": "3.11", "files": []}  # fmt: skip
    signed_meta(folder, meta)
    (found,) = layout.discover((str(tmp_path),))
    assert found.meta == meta
    return found, meta


def test_load_checks_the_signed_bytes_are_the_meta_it_uses(tmp_path: Path) -> None:
    found, meta = artifact_here(tmp_path)
    assert loader.untrusted(found.folder, meta, KEY) is None
    assert loader.untrusted(found.folder, dict(meta, case="other"), KEY) == "meta.json changed while it was read"
    assert loader.untrusted(found.folder, meta, None) == (
        "no signing key here to check its signature (set EXPORT_MATRIX_SIGNING_KEY to the key that signed it)"
    )


def items(batch: loader.LoadBatch) -> Dict[str, Any]:
    batch.set_up(batch_settings(), "run")
    (item,) = batch.items(batch.wanted())
    return {"job": item.job, **item.record}


def batch_settings() -> Any:
    return loader.LoadOptions(artifacts=("x",), out="o").settings("unused")


def test_an_unsigned_program_is_recorded_untrusted_and_given_no_job_unless_trusted(tmp_path: Path) -> None:
    found, _ = artifact_here(tmp_path)
    signed = items(loader.LoadBatch([found], "2.13.0", "cpu", "3.11", KEY))
    assert signed["status"] is None and signed["job"] is not None
    refused = items(loader.LoadBatch([found], "2.13.0", "cpu", "3.11", OTHER))
    assert refused["job"] is None and refused["status"] == schema.LoadStatus.UNTRUSTED.value == "untrusted"
    assert refused["error_type"] == "UntrustedArtifact"
    assert refused["error_message"] == (
        "untrusted artifact: the signature does not match the signing key (meta.json was changed, or signed"
        " with another key); pass --trust to load folders you made or trust"
    )
    (Path(found.folder) / "meta.sig").unlink()
    missing = items(loader.LoadBatch([found], "2.13.0", "cpu", "3.11", KEY))
    assert missing["job"] is None and missing["error_message"].startswith("untrusted artifact: no signature (meta.sig)")
    trusted = items(loader.LoadBatch([found], "2.13.0", "cpu", "3.11", None, trust=True))
    assert trusted["status"] is None and trusted["job"] is not None


def test_trust_is_a_flag_of_the_load_command_and_untrusted_records_are_not_done(tmp_path: Path) -> None:
    import argparse

    parser = argparse.ArgumentParser()
    loader.configure(parser)
    assert from_namespace(loader.LoadOptions, parser.parse_args(["a", "b", "--out", "o"])).trust is False
    assert from_namespace(loader.LoadOptions, parser.parse_args(["a", "b", "--out", "o", "--trust"])).trust is True
    record = {"schema_version": schema.SCHEMA_VERSION, "kind": "load", "saved_torch_version": "2.5.1",
              "saved_variant": "cpu", "saved_python": "3.11", "case": "lin", "mode": "strict"}  # fmt: skip
    path = tmp_path / "load.jsonl"
    path.write_text(json.dumps(dict(record, status="untrusted")) + "\n")
    batch = loader.LoadBatch([], "2.13.0", "cpu", "3.11", KEY)
    assert batch.done(str(path))[0] == set()
    path.write_text(json.dumps(dict(record, status="load-error")) + "\n")
    assert batch.done(str(path))[0] == {loader.journal_key(("2.5.1", "cpu", "3.11", "lin", "strict"))}


def test_untrusted_is_a_load_status_that_is_not_compared() -> None:
    status = schema.LoadStatus.UNTRUSTED
    assert status.rank is None and schema.load_rank("untrusted") is None
    assert status.symbol and status.colour.startswith("#") and "signature" in status.meaning
