"""trec_eval's own ``test/`` folder, and how a test that needs it skips: one place for all tests.

The trec_eval 10.0 binary (``$TREC_EVAL``) is built from ``../shared/oracles``, whose tarball
ships without the ``test/`` folder (qrels.test, results.test, out.test.*, ...). A test that reads
trec_eval's own test files finds them at ``$TREC_EVAL_TEST_DIR``, else in a ``test/`` beside the
binary (a full trec_eval checkout), and otherwise skips saying that folder is missing: a reason of
its own, not the one for an unset ``TREC_EVAL``. No Django here: the metrics tests use it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["missing_reason", "needs_test_dir", "trec_eval_test_dir"]


def trec_eval_test_dir() -> Path | None:
    """trec_eval's ``test/`` folder: ``$TREC_EVAL_TEST_DIR``, else ``test/`` beside the binary
    ``$TREC_EVAL``; None when neither names a folder holding ``qrels.test``."""
    given = os.environ.get("TREC_EVAL_TEST_DIR")
    binary = os.environ.get("TREC_EVAL")
    candidates = [Path(given)] if given else []
    if binary:
        candidates.append(Path(binary).resolve().parent / "test")
    return next((c for c in candidates if (c / "qrels.test").is_file()), None)


def missing_reason() -> str | None:
    """Why trec_eval's test folder cannot be read (a skip reason), or None when it is there."""
    if trec_eval_test_dir() is not None:
        return None
    given = os.environ.get("TREC_EVAL_TEST_DIR")
    binary = os.environ.get("TREC_EVAL")
    looked = [f"TREC_EVAL_TEST_DIR={given}" if given else "TREC_EVAL_TEST_DIR unset"]
    if binary:
        looked.append(f"no {Path(binary).resolve().parent / 'test'} beside the binary")
    return (
        f"trec_eval's own test/ folder is missing ({'; '.join(looked)}): the oracle tarball "
        "../shared/oracles/trec_eval-10.0-src.tar.gz ships without it; set TREC_EVAL_TEST_DIR to "
        "a trec_eval 10.0 checkout's test/ folder to run this"
    )


def needs_test_dir() -> pytest.MarkDecorator:
    """Mark a test that reads trec_eval's test folder: skipped with the reason when absent."""
    reason = missing_reason()
    return pytest.mark.skipif(reason is not None, reason=reason or "")
