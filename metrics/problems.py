"""One problem type and one input error for every reader in ``metrics`` and ``judging``.

A reader collects every :class:`Problem` it finds (capped, counted in full) in a
:class:`Problems` and raises :class:`InvalidInput` at the end, so a user sees all that is wrong
with a file at once, each problem with its 1-based line (0 for the file as a whole) or, for input
that has no lines (a JSON body, a form), the field it is in (``location``).

The Django side maps :class:`InvalidInput` to HTTP in one place (``judging.api.errors``).
"""

from __future__ import annotations

from typing import Any, NamedTuple, NoReturn


class Problem(NamedTuple):
    """One thing wrong with input: a 1-based ``line`` (0: the whole input), or a ``location``."""

    line: int
    message: str
    location: str | None = None

    @classmethod
    def at(cls, location: str, message: str) -> Problem:
        """A problem in a named field of input that has no lines (``results[3].docid``)."""
        return cls(0, message, location)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message}
        if self.line > 0:
            out["line"] = self.line
        if self.location is not None:
            out["location"] = self.location
        return out

    def __str__(self) -> str:
        if self.line > 0:
            return f"line {self.line}: {self.message}"
        if self.location is not None:
            return f"{self.location}: {self.message}"
        return self.message


class ReadWarning(NamedTuple):
    """Input a reader accepted although it is unusual (a NaN score, fields after the sixth):
    what, on how many lines, and the first of those lines (at most ten, in order)."""

    message: str
    total: int
    lines: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"message": self.message, "count": self.total, "lines": list(self.lines)}

    def __str__(self) -> str:
        if not self.lines:  # no lines to name (a JSON run): the count alone
            return f"{self.total} {'entry' if self.total == 1 else 'entries'} with {self.message}"
        more = self.total - len(self.lines)
        shown = ", ".join(str(n) for n in self.lines) + (f" and {more} more" if more > 0 else "")
        plural = "s" if self.total != 1 else ""
        return f"{self.total} line{plural} with {self.message}: line{plural} {shown}"


class InvalidInput(ValueError):
    """Input failed validation.

    ``problems`` lists at most the reader's cap of problems, in line order; ``total`` counts all
    of them. ``str(e)`` names the source, the first problem and how many more there are, e.g.
    ``run.txt line 12: score 'abc' is not a number (and 4 more problems)``.
    """

    def __init__(self, source: str, problems: list[Problem], total: int | None = None) -> None:
        self.source = source
        self.problems = list(problems)
        self.total = len(self.problems) if total is None else total
        super().__init__(self._message())

    def __reduce__(self) -> tuple[Any, ...]:  # survives pickling (Celery, multiprocessing)
        return (type(self), (self.source, self.problems, self.total))

    def _message(self) -> str:
        if not self.problems:
            return f"{self.source}: invalid input"
        first = self.problems[0]
        if first.line > 0:
            where = f"{self.source} line {first.line}"
        elif first.location is not None:
            where = f"{self.source} {first.location}"
        else:
            where = self.source
        more = self.total - 1
        tail = ""
        if more == 1:
            tail = " (and 1 more problem)"
        elif more > 1:
            tail = f" (and {more} more problems)"
        return f"{where}: {first.message}{tail}"


class Problems:
    """Collects problems, keeping the first ``limit`` (by line) and counting all of them."""

    def __init__(self, limit: int = 100) -> None:
        if limit < 1:
            raise ValueError("max_problems must be at least 1")
        self.limit = limit
        self.items: list[Problem] = []
        self.total = 0

    def __bool__(self) -> bool:
        return self.total > 0

    def add(self, line: int, message: str, location: str | None = None) -> None:
        self.total += 1
        self.items.append(Problem(line, message, location))
        if len(self.items) > 4 * self.limit:  # keep memory bounded on a hopeless file
            self.items = self.sorted()

    def add_at(self, location: str, message: str) -> None:
        self.add(0, message, location)

    def merge(self, other: Problems, offset: int = 0) -> None:
        """Add ``other``'s problems, their line numbers shifted by ``offset``."""
        for p in other.items:
            self.add(p.line + offset if p.line > 0 else 0, p.message, p.location)
        self.total += other.total - len(other.items)

    def sorted(self) -> list[Problem]:
        """The first ``limit`` problems in line order (stable: one line keeps its order)."""
        return sorted(self.items, key=lambda p: p.line)[: self.limit]

    def error(self, source: str) -> InvalidInput:
        return InvalidInput(source, self.sorted(), self.total)

    def raise_if_any(self, source: str) -> None:
        if self.total:
            raise self.error(source)

    def fatal(self, source: str, line: int, message: str) -> NoReturn:
        """Record one more problem and stop reading: nothing after it can be trusted."""
        self.add(line, message)
        raise self.error(source)
