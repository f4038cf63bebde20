"""Unpacking a golden set: the zip of ``GET /api/v1/qrels/{id}/export?format=beir``.

The zip holds ``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv`` and ``pooljudge.json``
(the qrels version, its sha256 and each file's sha256). Every entry is checked before anything
is written: a name that would land outside the target directory (absolute, or with ``..``) is
refused, and so is a file whose bytes do not hash to the sha256 ``pooljudge.json`` names, and a
``pooljudge.json`` naming another qrels hash than the answer did (``X-Qrels-SHA256``).
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import IO, Any

__all__ = ["METADATA", "unpack_golden_set"]

METADATA = "pooljudge.json"
_CHUNK = 1 << 20


def _safe_name(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts or "\\" in name:
        raise ValueError(f"the archive has an entry outside its folder: {name!r}")
    return path


def _sha256(archive: zipfile.ZipFile, name: str) -> str:
    digest = hashlib.sha256()
    with archive.open(name) as entry:
        while chunk := entry.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def unpack_golden_set(
    data: IO[bytes], target: Path, *, qrels_sha256: str | None = None
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Check the zip in ``data`` and unpack it under ``target`` (created if needed); the names
    of the files written and the decoded ``pooljudge.json`` (``{}`` without one). Raises
    ``ValueError`` naming the entry for an unsafe name or a file that fails its sha256, or
    when ``pooljudge.json`` names a qrels sha256 other than ``qrels_sha256``."""
    with zipfile.ZipFile(data) as archive:
        names = [i.filename for i in archive.infolist() if not i.is_dir()]
        for name in names:
            _safe_name(name)
        metadata: dict[str, Any] = {}
        if METADATA in names:
            metadata = json.loads(archive.read(METADATA).decode("utf-8"))
        qrels = metadata.get("qrels")
        named = qrels.get("sha256") if isinstance(qrels, Mapping) else None
        if qrels_sha256 and named and named != qrels_sha256:
            raise ValueError(f"{METADATA} names qrels sha256 {named!r}, not {qrels_sha256!r}")
        expected = metadata.get("files_sha256")
        if isinstance(expected, Mapping):
            for name, digest in expected.items():
                if name not in names:
                    raise ValueError(f"{METADATA} names {name!r}, which the archive lacks")
                if _sha256(archive, name) != digest:
                    raise ValueError(f"{name!r} does not hash to the sha256 {METADATA} names")
        target.mkdir(parents=True, exist_ok=True)
        for name in names:
            out = target.joinpath(*_safe_name(name).parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(name) as entry, out.open("wb") as file:
                while chunk := entry.read(_CHUNK):
                    file.write(chunk)
    return tuple(names), metadata
