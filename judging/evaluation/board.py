"""What a leaderboard view is: its mode, sort, order, filters and measures, read from a query string
(the page's URL, the API's, an export's), validated, and applied to the board's rows.

``board_query`` turns query-string parameters into a :class:`BoardQuery` (a 400 naming the bad
parameter otherwise); ``apply_query`` filters and sorts the rows the leaderboard selector built,
and ``describe`` says in words what the view is ("sorted by nDCG@10 descending · not pooled runs
only · topics tagged hard"). Nothing here reads the database: the selector passes in what the
user may see (groups, topic tags), so a filter never reveals a hidden group."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judging.core.errors import InvalidInput
from judging.evaluation.models import EvalMode
from metrics.measures.names import parse_measure
from metrics.problems import Problem

FIXED_SORTS = ("run", "pooled", "group")
ORDERS = ("asc", "desc")
POOLED = ("all", "yes", "no")
# a measure column's other sort keys: its Judged@k, the width of its confidence interval
SUFFIXES = ("judged", "ci")
SUFFIXES_TAIL = tuple(f":{s}" for s in SUFFIXES)
PARAM_MAX_LENGTH = 200
PARAMS = ("mode", "sort", "order", "pooled", "group", "slice", "measures")


@dataclass(frozen=True)
class BoardQuery:
    """One view of the leaderboard. ``mode``: the evaluations shown, honest (the default) or
    trec_eval (the official figures). ``sort``: ``run``, ``pooled``, ``group``, a measure (as
    the campaign names it) or ``<measure>:judged`` / ``<measure>:ci``; empty: the first measure
    shown. ``order`` empty: descending for measures and pooled, ascending for run and group.
    ``measures`` empty: every campaign measure, else those, in that order."""

    mode: str = EvalMode.HONEST.value
    sort: str = ""
    order: str = ""
    pooled: str = "all"
    group: str = ""
    slice: str = ""
    measures: tuple[str, ...] = field(default_factory=tuple)

    def shown_measures(self, campaign_measures: Sequence[str]) -> list[str]:
        return list(self.measures) if self.measures else list(campaign_measures)

    def sort_key(self, campaign_measures: Sequence[str]) -> str:
        shown = self.shown_measures(campaign_measures)
        return self.sort or (shown[0] if shown else "run")

    def direction(self, campaign_measures: Sequence[str]) -> str:
        if self.order:
            return self.order
        return "asc" if self.sort_key(campaign_measures) in ("run", "group") else "desc"

    def params(self) -> dict[str, str]:
        """The query-string parameters that give this view (defaults left out)."""
        out = {
            "mode": "" if self.mode == EvalMode.HONEST else self.mode,
            "sort": self.sort,
            "order": self.order,
            "pooled": "" if self.pooled == "all" else self.pooled,
            "group": self.group,
            "slice": self.slice,
            "measures": ",".join(self.measures),
        }
        return {k: v for k, v in out.items() if v}


def _values(params: Mapping[str, Any], name: str) -> list[str]:
    getlist = getattr(params, "getlist", None)
    raw = getlist(name) if callable(getlist) else [params[name]] if name in params else []
    return [str(v) for v in raw]


def _one(params: Mapping[str, Any], name: str) -> str:
    values = [v.strip() for v in _values(params, name) if v.strip()]
    if len(values) > 1:
        raise _bad(name, f"{name} is given {len(values)} times; give it once")
    value = values[0] if values else ""
    if len(value) > PARAM_MAX_LENGTH:
        raise _bad(name, f"at most {PARAM_MAX_LENGTH} characters")
    return value


def _bad(name: str, what: str) -> InvalidInput:
    return InvalidInput(f"{name}: {what}", [Problem.at(name, what)])


def measure_resolver(campaign_measures: Sequence[str]) -> dict[str, str]:
    """Canonical measure name -> the campaign's name for it (either naming style accepted)."""
    out: dict[str, str] = {}
    for m in campaign_measures:
        try:
            out[parse_measure(m).name] = m
        except ValueError:
            out[m] = m
    return out


def resolve_measure(text: str, campaign_measures: Sequence[str], param: str) -> str:
    """``text`` as the campaign names the measure (``ndcg_cut_10`` -> ``nDCG@10``), else a 400
    naming ``param`` and the campaign's measures."""
    if text in campaign_measures:
        return text
    try:
        canonical = parse_measure(text).name
    except ValueError:
        canonical = ""
    known = measure_resolver(campaign_measures)
    if canonical not in known:
        raise _bad(
            param,
            f"{text[:40]!r} is not one of the campaign's measures ({', '.join(campaign_measures)})",
        )
    return known[canonical]


def split_measures(text: str) -> list[str]:
    """``AP,nDCG@10,P(rel=2)@10`` -> the names (a comma inside parentheses does not split)."""
    return [p.strip() for p in re.split(r",(?![^()]*\))", text) if p.strip()]


def board_query(params: Mapping[str, Any], campaign_measures: Sequence[str]) -> BoardQuery:
    """The view the query-string ``params`` ask for, every parameter checked against the
    campaign's measures; a bad one is a 400 (``InvalidInput``) naming it. Which groups and topic
    tags exist is checked by the selector (``check_filters``), which knows what the user sees."""
    names = list(campaign_measures)
    measures: list[str] = []
    for raw in _values(params, "measures"):
        if len(raw) > PARAM_MAX_LENGTH * 4:
            raise _bad("measures", f"at most {PARAM_MAX_LENGTH * 4} characters")
        for m in split_measures(raw):
            name = resolve_measure(m, names, "measures")
            if name not in measures:
                measures.append(name)
    sort = _one(params, "sort")
    if sort and sort not in FIXED_SORTS:
        base, sep, suffix = sort.rpartition(":")
        if sep and suffix in SUFFIXES:
            sort = f"{resolve_measure(base, names, 'sort')}:{suffix}"
        else:
            try:
                sort = resolve_measure(sort, names, "sort")
            except InvalidInput:
                raise _bad(
                    "sort",
                    f"{sort[:40]!r} is not run, pooled, group, a campaign measure "
                    f"({', '.join(names)}) nor <measure>:judged or <measure>:ci",
                ) from None
    order = _one(params, "order").lower()
    if order and order not in ORDERS:
        raise _bad("order", f"{order[:40]!r} is not asc or desc")
    pooled = _one(params, "pooled").lower() or "all"
    if pooled not in POOLED:
        raise _bad("pooled", f"{pooled[:40]!r} is not one of all, yes, no")
    mode = _one(params, "mode") or EvalMode.HONEST.value
    if mode not in EvalMode.values:
        raise _bad("mode", f"{mode[:40]!r} is not one of {', '.join(EvalMode.values)}")
    return BoardQuery(
        mode=mode,
        sort=sort,
        order=order,
        pooled=pooled,
        group=_one(params, "group"),
        slice=_one(params, "slice"),
        measures=tuple(measures),
    )


def check_filters(query: BoardQuery, *, groups: Iterable[str], tags: Iterable[str]) -> None:
    """A 400 for a group the user sees no run of (``groups``: the groups the board shows,
    anonymised runs have none) or a topic tag no topic carries."""
    seen = sorted(set(groups))
    if query.group and query.group not in seen:
        known = ", ".join(repr(g) for g in seen) if seen else "none is shown to you"
        raise _bad("group", f"{query.group[:40]!r} is not a group of the runs shown ({known})")
    known_tags = sorted(set(tags))
    if query.slice and query.slice not in known_tags:
        shown = ", ".join(known_tags) if known_tags else "no topic has a tag"
        raise _bad("slice", f"{query.slice[:40]!r} is not a topic tag ({shown})")


def cell_value(row: Mapping[str, Any], key: str) -> Any:
    """The value a row sorts by under ``key``; None when it has none (sorted last)."""
    if key == "run":
        return str(row.get("run", "")).casefold()
    if key == "pooled":
        return 1 if row.get("pooled") else 0
    if key == "group":
        return str(row.get("group") or "").casefold() or None
    measure, suffix = key, ""
    if key.endswith(SUFFIXES_TAIL):
        measure, _, suffix = key.rpartition(":")
    entry = (row.get("measures") or {}).get(measure) or {}
    if suffix == "judged":
        return (entry.get("judged") or {}).get("value")
    if suffix == "ci":
        low, high = entry.get("ci_low"), entry.get("ci_high")
        return None if low is None or high is None else high - low
    return entry.get("value")


def apply_query(
    rows: list[dict[str, Any]], query: BoardQuery, campaign_measures: Sequence[str]
) -> list[dict[str, Any]]:
    """The rows the view keeps (pooled, group), sorted: runs without a value last in both
    orders, ties broken by the run's label."""
    kept = [
        r
        for r in rows
        if (query.pooled == "all" or bool(r.get("pooled")) == (query.pooled == "yes"))
        and (not query.group or r.get("group") == query.group)
    ]
    key = query.sort_key(campaign_measures)
    desc = query.direction(campaign_measures) == "desc"

    def label(r: dict[str, Any]) -> tuple[str, str]:
        text = str(r.get("run", ""))
        return (text.casefold(), text)

    kept.sort(key=label)
    valued = [r for r in kept if _finite(cell_value(r, key))]
    missing = [r for r in kept if not _finite(cell_value(r, key))]
    valued.sort(key=lambda r: cell_value(r, key), reverse=desc)  # stable: ties keep label order
    return valued + missing


def _finite(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    return True


def column_name(key: str) -> str:
    """How a sort key reads in a sentence: ``nDCG@10:judged`` -> ``Judged@k of nDCG@10``."""
    measure, _, suffix = key.rpartition(":")
    if suffix == "judged" and measure:
        return f"Judged@k of {measure}"
    if suffix == "ci" and measure:
        return f"CI width of {measure}"
    return key


def describe(
    query: BoardQuery,
    campaign_measures: Sequence[str],
    *,
    shown: int,
    total: int,
    slice_topics: int | None = None,
) -> str:
    """The view in words: ``sorted by nDCG@10 descending · not pooled runs only · topics
    tagged hard (12 topics) · 5 of 17 runs`` (and ``trec_eval mode`` when not honest)."""
    order = "descending" if query.direction(campaign_measures) == "desc" else "ascending"
    parts = [f"sorted by {column_name(query.sort_key(campaign_measures))} {order}"]
    if query.mode != EvalMode.HONEST:
        parts.append(f"{query.mode} mode")
    if query.pooled == "yes":
        parts.append("pooled runs only")
    elif query.pooled == "no":
        parts.append("not pooled runs only")
    if query.group:
        parts.append(f"group {query.group}")
    if query.slice:
        n = slice_topics if slice_topics is not None else 0
        parts.append(f"over the {n} topic{'s' if n != 1 else ''} tagged {query.slice}")
    parts.append(f"{shown} of {total} runs" if shown != total else f"all {total} runs")
    return " · ".join(parts)
