"""Z-scores (trec_eval ``-Z FILE``): every per-query value in standard deviations from a mean.

The file (get_zscores.c) has lines ``qid measure mean stddev``: for a topic and a measure as
trec_eval prints its name (``P_10``, ``map``, ``gm_map``), the mean and standard deviation of
that value over reference runs. It is read as the TREC readers read (blank lines and lines whose
first field starts with ``#`` skipped, gzip recognised); each problem is reported with its line:
not 4 fields, a mean or stddev that is not a finite number, an id with a control character, a
(qid, measure) given twice (trec_eval keeps both and finds either).

Conversion of a value v of query q and measure m (convert_zscores.c): with (mean, sd) found for
(q, m), z = (v - mean) / sd; when sd = 0, z = 0 if v = mean and -1000000 otherwise; when q or
(q, m) is not found, -1000000. The look-ups are trec_eval's binary searches, kept as they are:
the entries are sorted by (qid, measure) in byte order, and the search over a query's entries
also reads the entry just after them, the next query's first: a measure name above every one of
q's that equals the next query's first name is found there. Past the file's last entry (a
measure above every name of the last query, a qid above every qid of the file) trec_eval reads
outside its arrays (undefined; it crashes in practice): not found here.

The summary accumulates the z-scores as trec_eval accumulates the raw values (trec_eval.c, then
each measure's averaging): the mean over the queries evaluated, the sum for counts (num_ret,
prefs_num_prefs_poss, ...), ``exp`` of the mean for gm_map and gm_bpref (what trec_eval converts
for those is the per-query log(max(v, 0.00001))), the number of queries for num_q, and with
``-c`` trec_eval's count of relevant judgments for num_rel (it replaces the accumulated value).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from metrics.evaluation.evaluator import GEO_MEAN_FLOOR
from metrics.evaluation.judgment_groups import JudgmentGroupResult
from metrics.evaluation.results import Aggregate, EvaluationResult
from metrics.io.limits import DEFAULT_LIMITS, Limits, id_problem, show
from metrics.io.prefs import read_bytes, split_lines
from metrics.io.trec import Source
from metrics.measures.names import parse_measure
from metrics.problems import Problems

__all__ = ["MISSING", "Kind", "ZScores", "read_zscores", "zscore_jg", "zscore_result"]

MISSING = -1000000.0  # trec_eval.h MISSING_ZSCORE_VALUE
Kind = Literal["mean", "sum", "geometric"]


@dataclass(frozen=True)
class ZScores:
    """Means and standard deviations per (qid, measure), sorted as trec_eval sorts them.

    The entries are sorted by (qid, measure) as UTF-8 bytes: ``names`` their measures,
    ``stats`` their (mean, stddev); ``qids`` the distinct qids in byte order and ``starts``
    where each one's entries begin (and, last, the number of entries).
    """

    names: tuple[bytes, ...]
    stats: tuple[tuple[float, float], ...]
    qids: tuple[bytes, ...]
    starts: tuple[int, ...]

    @classmethod
    def from_entries(cls, entries: dict[tuple[str, str], tuple[float, float]]) -> ZScores:
        """Build from ``{(qid, measure): (mean, stddev)}``."""
        items = sorted(((q.encode(), m.encode()), v) for (q, m), v in entries.items())
        qids: list[bytes] = []
        starts: list[int] = []
        for i, ((q, _), _) in enumerate(items):
            if not qids or qids[-1] != q:
                qids.append(q)
                starts.append(i)
        names = tuple(m for (_, m), _ in items)
        stats = tuple(v for _, v in items)
        return cls(names, stats, tuple(qids), (*starts, len(items)))

    def lookup(self, qid: str, measure: str) -> tuple[float, float] | None:
        """(mean, stddev) for a query's measure, found as trec_eval finds it (module
        docstring), or None."""
        q = _search(self.qids, 0, len(self.qids), qid.encode())
        if q is None:
            return None
        first = self.starts[q]
        at = _search(self.names, first, self.starts[q + 1] - first, measure.encode())
        return None if at is None else self.stats[at]

    def convert(self, qid: str, measure: str, value: float) -> float:
        """The z-score of ``value`` (module docstring)."""
        found = self.lookup(qid, measure)
        if found is None:
            return MISSING
        mean, sd = found
        if sd:
            return (value - mean) / sd
        return 0.0 if value == mean else MISSING

    def convert_all(
        self, qids: Sequence[str], measure: str, values: Sequence[float], kind: Kind
    ) -> tuple[list[float], float]:
        """Each query's z-score and their summary: the mean, the sum, or ``exp`` of the mean
        (``geometric``: ``values`` are then the per-query logs trec_eval converts)."""
        z = [self.convert(q, measure, v) for q, v in zip(qids, values, strict=True)]
        total = 0.0
        for x in z:  # left to right, as trec_eval accumulates
            total += x
        if kind == "sum":
            return z, total
        if not z:
            return z, math.nan
        return z, math.exp(total / len(z)) if kind == "geometric" else total / len(z)


def _search(keys: Sequence[bytes], lo: int, n: int, key: bytes) -> int | None:
    """convert_zscores.c's binary search of ``key`` in ``keys[lo : lo + n]``, which also reads
    ``keys[lo + n]``; None when not found or when it would read past ``keys``."""
    start, end = 0, n
    while start <= end:
        current = (start + end) // 2
        if lo + current >= len(keys):
            return None  # trec_eval reads outside its array here
        found = keys[lo + current]
        if key < found:
            end = current - 1
        elif key > found:
            start = current + 1
        else:
            return lo + current
    return None


def _number(token: bytes, what: str) -> float | str:
    try:
        value = float(token)
    except ValueError:
        return f"{what} {show(token)} is not a number"
    return value if math.isfinite(value) else f"{what} {show(token)} is not a finite number"


def read_zscores(
    src: Source,
    *,
    source: str | None = None,
    max_problems: int = 100,
    limits: Limits = DEFAULT_LIMITS,
) -> ZScores:
    """Read a z-scores file (module docstring); raises :class:`~metrics.problems.InvalidInput`
    listing every problem with its line."""
    name, data = read_bytes(src, source, limits)
    problems = Problems(max(1, max_problems))
    entries: dict[tuple[str, str], tuple[float, float]] = {}
    first_seen: dict[tuple[str, str], int] = {}
    data_lines = 0
    for number, line in enumerate(split_lines(data), start=1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        data_lines += 1
        if len(fields) != 4:
            problems.add(number, f"expected 4 fields (qid measure mean stddev), got {len(fields)}")
            continue
        bad = id_problem("qid", fields[0], limits.qid_bytes) or id_problem(
            "measure", fields[1], limits.qid_bytes
        )
        mean, sd = _number(fields[2], "mean"), _number(fields[3], "stddev")
        if bad is not None or isinstance(mean, str) or isinstance(sd, str):
            problems.add(number, bad or next(s for s in (mean, sd) if isinstance(s, str)))
            continue
        try:
            key = (fields[0].decode(), fields[1].decode())
        except UnicodeDecodeError as exc:
            problems.add(number, f"not valid UTF-8 (byte {exc.start + 1})")
            continue
        first = first_seen.setdefault(key, number)
        if first != number:
            problems.add(
                number,
                f"measure {show(fields[1])} of qid {show(fields[0])} is given twice (first on "
                f"line {first})",
            )
            continue
        entries[key] = (mean, sd)
    if data_lines == 0:
        problems.add(0, "no data lines (empty file)")
    problems.raise_if_any(name)
    return ZScores.from_entries(entries)


def zscore_result(
    res: EvaluationResult, zscores: ZScores, labels: Mapping[str, str]
) -> EvaluationResult:
    """A trec_eval-mode result with z-scores for values (module docstring): ``labels`` maps each
    measure's canonical name to the name it is printed, and looked up, by (``P_10``)."""
    n = len(res.queries)
    per_query: dict[str, dict[str, float]] = {}
    aggregates: dict[str, Aggregate] = {}
    for name in res.measures:
        m = parse_measure(name)
        values = [res.per_query[name][q] for q in res.queries]
        kind: Kind = "sum" if m.is_count else "mean"
        if m.spec.geometric:  # gm_map's per-query value is log(max(AP, 0.00001))
            kind = "geometric"
            values = [math.log(max(v, GEO_MEAN_FLOOR)) for v in values]
        z, summary = zscores.convert_all(res.queries, labels.get(name, name), values, kind)
        if m.family == "NumQ":
            summary = float(n)
        elif m.family == "NumRel" and res.complete:
            summary = res.aggregates[name].value  # -c: trec_eval's count, not accumulated
        per_query[name] = dict(zip(res.queries, z, strict=True))
        aggregates[name] = Aggregate(summary, None, None, None, n, "zscore")
    return replace(res, per_query=per_query, aggregates=aggregates)


def zscore_jg(result: JudgmentGroupResult, zscores: ZScores) -> JudgmentGroupResult:
    """A judgment-group result (``-R qrels_jg``) with z-scores for values: every measure there
    is a mean over topics."""
    values = [m for m in result.measures if m not in ("runid", "num_q")]
    per_query: dict[str, dict[str, float]] = {}
    aggregates: dict[str, float] = {}
    for m in values:
        raw = [result.per_query[m][q] for q in result.queries]
        z, aggregates[m] = zscores.convert_all(result.queries, m, raw, "mean")
        per_query[m] = dict(zip(result.queries, z, strict=True))
    return replace(result, per_query=per_query, aggregates=aggregates)
