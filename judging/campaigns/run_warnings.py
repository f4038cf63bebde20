"""What a run was stored with although it deserves a look: its warnings, of three kinds.

- ``read``: what the reader accepted as trec_eval does (NaN or infinite scores, fields after the
  sixth; ``metrics.problems.ReadWarning``), with its count and first lines;
- ``same_content``: the run ranks the same documents with the same scores for every topic as
  another run its submitter may see (their own; an admin's, any of the campaign), stored under
  another tag;
- ``unknown_docids``: entries whose docid is not among the campaign's documents (only when the
  campaign has documents), with how many docids and a few of them.

A run stores them in ``Run.warnings`` as ``{kind, message, count, lines}`` (rows stored before
kinds existed have no ``kind``: they are ``read``); the API answers each with its ``text``, the
sentence the run's page shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from metrics.problems import ReadWarning

READ = "read"
SAME_CONTENT = "same_content"
UNKNOWN_DOCIDS = "unknown_docids"
KINDS = (READ, SAME_CONTENT, UNKNOWN_DOCIDS)


@dataclass(frozen=True, slots=True)
class RunWarning:
    """One warning: its ``kind``, what it is about, on how many entries, and the first of their
    lines when the run came from a file and the lines are known (at most ten)."""

    kind: str
    message: str
    count: int
    lines: tuple[int, ...] = ()

    @classmethod
    def read(cls, warning: ReadWarning) -> RunWarning:
        return cls(READ, warning.message, warning.total, warning.lines)

    @classmethod
    def from_dict(cls, stored: dict[str, Any]) -> RunWarning:
        return cls(
            stored.get("kind", READ),
            stored["message"],
            int(stored["count"]),
            tuple(stored.get("lines", ())),
        )

    def as_dict(self) -> dict[str, Any]:
        """As stored in ``Run.warnings``."""
        return {
            "kind": self.kind,
            "message": self.message,
            "count": self.count,
            "lines": list(self.lines),
        }

    def __str__(self) -> str:
        if self.kind == SAME_CONTENT:
            return self.message
        return str(ReadWarning(self.message, self.count, self.lines))
