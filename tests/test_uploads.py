"""judging.core.uploads: the one way in for files (size limits, gzip once, reader errors)."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from judging.core import uploads
from judging.core.errors import InvalidInput, TooLarge
from metrics.io import read_run
from metrics.problems import InvalidInput as ReaderError
from metrics.problems import Problem, Problems
from tests.knobs import override_knobs

RUN = b"401 Q0 d1 1 2.5 t\n401 Q0 d2 2 1.0 t\n"


def test_plain_bytes_are_handed_on_as_they_are() -> None:
    upload = uploads.read(RUN, what="the run file", limit=1000, source="r.txt")

    assert upload.data is RUN  # no copy of a large run
    assert upload.name == "r.txt"


def test_gzip_is_undone_once_including_several_members() -> None:
    packed = gzip.compress(RUN[:18]) + gzip.compress(RUN[18:])
    upload = uploads.read(SimpleUploadedFile("r.gz", packed), what="the run file", limit=1000)

    assert upload.data == RUN
    assert upload.name == "r.gz"


def test_a_path_is_read_and_named_after_itself(tmp_path: Path) -> None:
    path = tmp_path / "input.bm25.gz"
    path.write_bytes(gzip.compress(RUN))

    upload = uploads.read(path, what="the run file", limit=None)

    assert upload.data == RUN and upload.name == str(path)


def test_the_size_as_received_is_checked_before_reading() -> None:
    with pytest.raises(TooLarge, match="the run file is 36 bytes; the limit is 10 bytes"):
        uploads.read(SimpleUploadedFile("r.txt", RUN), what="the run file", limit=10)


def test_a_gzip_bomb_stops_at_the_limit_without_being_inflated_whole() -> None:
    # 32 MB of zeros compresses to about 32 KB: the output is refused after 3 MB of it.
    bomb = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    packed = b"".join(bomb.compress(bytes(1 << 24)) for _ in range(2)) + bomb.flush()
    pieces = uploads.gunzip([packed], source="bomb.gz", limit=3 << 20, what="the bomb")
    seen = 0

    with pytest.raises(TooLarge, match="the bomb decompresses to more than 3,145,728 bytes"):
        for piece in pieces:
            assert len(piece) <= 1 << 20
            seen += len(piece)

    assert seen <= 3 << 20


@override_knobs(max_upload_bytes=100, max_decompressed_bytes=0)  # 0: the limit as received
def test_the_decompressed_limit_defaults_to_the_limit_as_received() -> None:
    packed = gzip.compress(RUN * 10)
    assert len(packed) < 100 < len(RUN * 10)

    with pytest.raises(TooLarge, match="decompresses to more than 100 bytes"):
        uploads.read(packed, what="the run file", limit=100)


@override_knobs(max_decompressed_bytes=10_000)
def test_the_decompressed_limit_is_a_setting() -> None:
    packed = gzip.compress(RUN * 10)

    assert uploads.read(packed, what="the run file", limit=100).data == RUN * 10


def test_corrupt_gzip_is_invalid_input_naming_the_file() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        uploads.read(gzip.compress(RUN)[:-12], what="the run file", limit=None, source="r.gz")

    assert excinfo.value.status == 400
    assert excinfo.value.source == "r.gz"
    assert excinfo.value.problems == [Problem(0, "gzip data is truncated")]


def test_reader_errors_become_the_service_error_with_every_problem() -> None:
    with pytest.raises(InvalidInput) as excinfo, uploads.reading("the run file"):
        read_run(b"401 Q0 d1 1 x t\n401 Q0 d\xff 2 1 t\n", source="r.txt")

    error = excinfo.value
    assert error.message == "the run file has 2 problem(s); nothing was stored"
    assert [(p.line, p.message) for p in error.problems] == [
        (1, "score 'x' is not a number"),
        (2, "not valid UTF-8 (byte 0xff at column 9)"),
    ]
    assert (error.total, error.source) == (2, "r.txt")


def test_bad_utf8_is_a_problem_on_its_line() -> None:
    problems = Problems()
    lines = list(uploads.decode_lines([b"\xef\xbb\xbfok\r\n", b"caf\xe9\n"], problems))

    assert lines == [(1, "ok"), (2, "caf\ufffd")]
    assert problems.error("x").problems == [Problem(2, "not valid UTF-8 (byte 0xe9 at column 4)")]


def test_a_line_cut_while_read_is_named_with_its_whole_length() -> None:
    problems = Problems()
    chunks = [b"ok\nx", b"x" * 50, b"y" * 50, b"\r\nfine\r", b"\nz" + b"z" * 20]
    lines = list(uploads.decode_lines(chunks, problems, max_line=10))

    assert lines == [(1, "ok"), (2, ""), (3, "fine"), (4, "")]
    assert problems.error("x").problems == [
        Problem(2, "the line is 101 bytes long; the limit is 10"),
        Problem(4, "the line is 21 bytes long; the limit is 10"),
    ]


def test_a_reader_error_outside_a_service_is_not_swallowed() -> None:
    with pytest.raises(ReaderError):
        uploads.gunzip_head(b"\x1f\x8b" + bytes(30), source="d.gz")
