"""The per-query comparison of two runs (as DiffIR's and ranx's comparison reports): per topic
both runs' scores on one measure and their difference, the wins, ties and losses, a paired test;
and for one topic both rankings side by side, each document's grade in the qrels version and
whether the other run retrieved it.

Conventions, stated in every answer:

- the difference is **A - B** (positive: A did better on the topic);
- A *wins* a topic when A - B > ``tie``, *ties* when |A - B| <= ``tie``, *loses* otherwise;
  ``tie`` is 0 by default (exact equality);
- the values are the stored per-topic values of the honest evaluation under one qrels version
  (``selectors.per_query_values``): topics with no relevant document are excluded there, and a
  topic that one run has a value for and the other not is scored 0 for the other (as the board
  scores a topic a run did not answer) and listed in ``missing``;
- means are macro averages over the compared topics; the paired test
  (``metrics.stats.paired.paired_test``) pairs on the same topics.

Who sees what: scores of any run under its label (``run_label``; the leaderboard shows every
run's aggregates anonymised); the documents of a ranking only for runs the user sees by name
(``sees_run``: own runs, admins all). For another researcher's run nothing of its ranking is
shown, not even where it ranked the documents of the other run (that would be its ranking, one
document at a time): only aggregates (the topic's score, the relevant documents neither run
retrieved).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings

from judging.assessments.models import QrelsEntry, QrelsVersion
from judging.campaigns.models import Campaign, Document, RankedList, Run, Topic
from judging.campaigns.selectors import run_label, sees_run
from judging.core.errors import InvalidInput
from judging.core.models import JobState
from judging.core.roles import UserLike
from judging.evaluation.selectors import leaderboard, per_query_values
from metrics.problems import Problem
from metrics.stats.paired import TestName, paired_test

DIFFERENCE = "A \u2212 B"
TESTS = ("t", "randomization", "bootstrap")
TEST_NAMES = {
    "t": "paired t-test",
    "randomization": "paired randomization test (sign flip)",
    "bootstrap": "paired bootstrap test",
}
SORTS = ("diff", "-diff", "qid", "-qid", "a", "-a", "b", "-b")
HIDDEN_RANKING = "rankings of other researchers' runs are not shown"
TITLE_CHARS = 160


def natural_qid(qid: str) -> tuple[int, str]:
    """Topic ids in reading order: "2" before "10" (shorter first, then by characters)."""
    return (len(qid), qid)


# --- which runs --------------------------------------------------------------------------


def versus_choices(
    *, campaign: Campaign, version: QrelsVersion, user: UserLike, measure: str = ""
) -> list[dict[str, Any]]:
    """The runs one can compare under ``version``: those with a finished evaluation, as the user
    may see them (labels), best first by ``measure`` (default: the campaign's first, the
    leaderboard's order); each ``{"label", "value"}``."""
    board = leaderboard(campaign=campaign, version=version, user=user)
    key = measure or (board["measures"][0] if board["measures"] else "")
    rows = [r for r in board["runs"] if r["state"] == JobState.DONE]

    def value(r: dict[str, Any]) -> float | None:
        v = (r.get("measures") or {}).get(key, {}).get("value")
        return float(v) if v is not None else None

    def best_first(r: dict[str, Any]) -> float:
        v = value(r)
        return -(v if v is not None else -1.0)

    rows.sort(key=best_first)
    return [{"label": r["run"], "value": value(r)} for r in rows]


def _run_by_label(campaign: Campaign, user: UserLike) -> dict[str, Run]:
    return {run_label(run, user): run for run in campaign.runs.select_related("owner")}


def _pick(labels: dict[str, Run], label: str, field: str) -> Run:
    run = labels.get(label)
    if run is None:
        shown = label[:60]
        raise InvalidInput(
            f"{field}: no run {shown!r} in this campaign",
            [Problem.at(field, f"{shown!r} is not the label of a run you may compare")],
        )
    return run


def _pair(
    campaign: Campaign, version: QrelsVersion, user: UserLike, a: str, b: str
) -> tuple[str, str, Run, Run]:
    """The two runs named by their labels; missing labels default to the best two runs."""
    if not a or not b:
        choices = versus_choices(campaign=campaign, version=version, user=user)
        best = [c["label"] for c in choices]
        if not a:
            a = next((x for x in best if x != b), "")
        if not b:
            b = next((x for x in best if x != a), "")
        for field, label in (("a", a), ("b", b)):
            if not label:
                raise InvalidInput(
                    f"{field}: there are not two evaluated runs to compare",
                    [
                        Problem.at(
                            field,
                            f"give a run's label: fewer than two runs have an evaluation "
                            f"against qrels version {version.number}",
                        )
                    ],
                )
    labels = _run_by_label(campaign, user)
    run_a = _pick(labels, a, "a")
    run_b = _pick(labels, b, "b")
    if run_a.pk == run_b.pk:
        raise InvalidInput(
            "b: the same run twice",
            [Problem.at("b", "choose a run other than A to compare it with")],
        )
    return a, b, run_a, run_b


def _check_test(test: str) -> str:
    if test not in TESTS:
        raise InvalidInput(
            "test: unknown test",
            [Problem.at("test", f"{test[:40]!r} is not one of {', '.join(TESTS)}")],
        )
    return test


def _check_sort(sort: str) -> str:
    if sort not in SORTS:
        raise InvalidInput(
            "sort: unknown order",
            [Problem.at("sort", f"{sort[:40]!r} is not one of {', '.join(SORTS)}")],
        )
    return sort


def parse_tie(raw: str | None) -> float:
    """The ``tie`` query parameter (empty: 0, exact equality) as a float in [0, 1]; else a 400
    naming it."""
    if raw is None or raw.strip() == "":
        return 0.0
    try:
        value = float(raw.strip()[:40])
    except ValueError:
        raise InvalidInput(
            "tie: not a number",
            [Problem.at("tie", f"must be a number between 0 and 1, not {raw[:40]!r}")],
        ) from None
    return _check_tie(value)


def _check_tie(tie: float) -> float:
    if not (0.0 <= tie <= 1.0):  # NaN too
        raise InvalidInput(
            "tie: out of range",
            [Problem.at("tie", f"the tie tolerance must be between 0 and 1, not {tie}")],
        )
    return tie


# --- per topic ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Scores:
    measure: str
    a: dict[str, float]
    b: dict[str, float]
    evaluated_a: bool
    evaluated_b: bool

    @property
    def qids(self) -> list[str]:
        return sorted(set(self.a) | set(self.b), key=natural_qid)

    def pair(self, qid: str) -> tuple[float | None, float | None]:
        """Both values on the topic; 0 for the one without a value when the other has one."""
        va, vb = self.a.get(qid), self.b.get(qid)
        if va is None and vb is None:
            return None, None
        return (va if va is not None else 0.0), (vb if vb is not None else 0.0)


def _scores(
    campaign: Campaign,
    version: QrelsVersion,
    measure: str,
    user: UserLike,
    a: tuple[str, Run],
    b: tuple[str, Run],
) -> _Scores:
    canonical, per_query, by_label = per_query_values(
        campaign=campaign, version=version, measure=measure, user=user, runs=[a[1], b[1]]
    )
    return _Scores(
        measure=canonical,
        a=per_query.get(a[0], {}),
        b=per_query.get(b[0], {}),
        evaluated_a=a[0] in by_label,
        evaluated_b=b[0] in by_label,
    )


def _require_evaluated(scores: _Scores, version: QrelsVersion, a: str, b: str) -> None:
    for field, ok, label in (("a", scores.evaluated_a, a), ("b", scores.evaluated_b, b)):
        if not ok:
            raise InvalidInput(
                f"{field}: {label[:60]!r} has no evaluation against qrels version {version.number}",
                [
                    Problem.at(
                        field,
                        f"{label[:60]!r} has no finished evaluation against qrels version "
                        f"{version.number} (its run page computes one)",
                    )
                ],
            )


_SORT_KEYS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "diff": lambda r: (-r["diff"], natural_qid(r["qid"])),
    "-diff": lambda r: (r["diff"], natural_qid(r["qid"])),
    "qid": lambda r: natural_qid(r["qid"]),
    "a": lambda r: (-r["a"], natural_qid(r["qid"])),
    "-a": lambda r: (r["a"], natural_qid(r["qid"])),
    "b": lambda r: (-r["b"], natural_qid(r["qid"])),
    "-b": lambda r: (r["b"], natural_qid(r["qid"])),
}


def _topic_rows(campaign: Campaign, scores: _Scores, sort: str) -> list[dict[str, Any]]:
    topics: dict[str, dict[str, Any]] = {
        t["qid"]: dict(t)
        for t in Topic.objects.filter(campaign=campaign, qid__in=scores.qids).values(
            "qid", "title", "description", "narrative"
        )
    }
    rows: list[dict[str, Any]] = []
    for qid in scores.qids:
        va, vb = scores.pair(qid)
        if va is None or vb is None:
            continue
        t = topics.get(qid, {})
        rows.append(
            {
                "qid": qid,
                "title": t.get("title", ""),
                "description": t.get("description", ""),
                "narrative": t.get("narrative", ""),
                "a": va,
                "b": vb,
                "diff": va - vb,
                "a_missing": qid not in scores.a,
                "b_missing": qid not in scores.b,
            }
        )
    if sort == "-qid":
        rows.sort(key=lambda r: natural_qid(r["qid"]), reverse=True)
    else:
        rows.sort(key=_SORT_KEYS[sort])
    return rows


def run_versus(
    *,
    campaign: Campaign,
    version: QrelsVersion,
    a: str = "",
    b: str = "",
    measure: str = "",
    user: UserLike,
    sort: str = "diff",
    test: str = "t",
    tie: float = 0.0,
) -> dict[str, Any]:
    """Runs ``a`` and ``b`` (labels as the user sees them; empty: the best two by the first
    measure) topic by topic on ``measure`` (default: the campaign's first) under ``version``.

    ``topics``: ``{qid, title, description, narrative, a, b, diff, a_missing, b_missing}`` with
    diff = A - B, in ``sort`` order (``diff``: A's largest gain first, ``-diff`` the reverse,
    ``qid``, ``a``/``b``: that run's best first, a leading ``-`` reverses). ``wins``/``ties``/
    ``losses`` count the topics A wins, ties (|A - B| <= ``tie``) and loses; ``p_value`` is
    ``metrics.stats.paired.paired_test(A, B, test=test)`` over the same topics (None, with a note,
    for fewer than two topics). Bad parameters are an ``InvalidInput`` naming the parameter."""
    _check_test(test)
    _check_sort(sort)
    _check_tie(tie)
    a, b, run_a, run_b = _pair(campaign, version, user, a, b)
    scores = _scores(campaign, version, measure, user, (a, run_a), (b, run_b))
    _require_evaluated(scores, version, a, b)
    rows = _topic_rows(campaign, scores, sort)
    n = len(rows)
    wins = sum(1 for r in rows if r["diff"] > tie)
    losses = sum(1 for r in rows if r["diff"] < -tie)
    out: dict[str, Any] = {
        "campaign": campaign.pk,
        "qrels_version": version.number,
        "qrels_kind": version.kind_label,
        "qrels_hash": version.content_hash,
        "mode": "honest",
        "measure": scores.measure,
        "a": a,
        "b": b,
        "difference": DIFFERENCE,
        "averaging": "macro over the compared topics",
        "sort": sort,
        "tie": tie,
        "tie_rule": (
            "A wins when A \u2212 B > tie, ties when |A \u2212 B| <= tie, loses otherwise"
            + (" (tie 0: exact equality)" if tie == 0 else "")
        ),
        "n_topics": n,
        "wins": wins,
        "ties": n - wins - losses,
        "losses": losses,
        "mean_a": sum(r["a"] for r in rows) / n if n else None,
        "mean_b": sum(r["b"] for r in rows) / n if n else None,
        "mean_diff": sum(r["diff"] for r in rows) / n if n else None,
        "test": test,
        "test_name": TEST_NAMES[test],
        "correction": "none (one comparison)",
        "statistic": None,
        "p_value": None,
        "missing": [
            {"qid": r["qid"], "run": "A" if r["a_missing"] else "B", "scored": 0.0}
            for r in sorted(rows, key=lambda r: natural_qid(r["qid"]))
            if r["a_missing"] or r["b_missing"]
        ],
        "topics": rows,
    }
    if n >= 2:
        # paired in topic order, whatever the list's order (the resampling tests depend on it)
        pairs = sorted(rows, key=lambda r: natural_qid(r["qid"]))
        result = paired_test(
            [r["a"] for r in pairs], [r["b"] for r in pairs], test=cast(TestName, test)
        )
        out["statistic"] = result.statistic
        out["p_value"] = result.p_value
    else:
        out["note"] = f"{n} topic{'' if n == 1 else 's'} to compare: the paired test needs two"
    return out


# --- one topic ---------------------------------------------------------------------------


def _depth(depth: int | None) -> int:
    maximum = int(settings.POOLJUDGE_EVALUATION.versus_max_depth)
    if depth is None:
        return min(int(settings.POOLJUDGE_EVALUATION.versus_depth), maximum)
    if not (1 <= depth <= maximum):
        raise InvalidInput(
            "depth: out of range",
            [Problem.at("depth", f"must be between 1 and {maximum}, not {depth}")],
        )
    return depth


def _ranking(run: Run, topic: Topic) -> list[str]:
    row = RankedList.objects.filter(run=run, topic=topic).values_list("docids", flat=True).first()
    return row.split("\n") if row else []


def _column(
    label: str,
    visible: bool,
    ranking: list[str],
    other: list[str],
    other_visible: bool,
    depth: int,
    qrels: dict[str, int],
    threshold: int,
    titles: dict[str, str],
    score: float | None,
) -> dict[str, Any]:
    column: dict[str, Any] = {
        "run": label,
        "score": score,
        "shown": visible,
        "retrieved": len(ranking),
    }
    if not visible:
        return {**column, "note": HIDDEN_RANKING, "rows": []}
    other_rank = {d: i + 1 for i, d in enumerate(other)} if other_visible else {}
    rows = []
    for i, docid in enumerate(ranking[:depth]):
        grade = qrels.get(docid)
        if grade is not None and grade < 0:  # pooled but not judged
            grade = None
        rank_other = other_rank.get(docid)
        rows.append(
            {
                "rank": i + 1,
                "docid": docid,
                "title": titles.get(docid, ""),
                "grade": grade,
                "judged": grade is not None,
                "relevant": grade is not None and grade >= threshold,
                # where the other run has it (its whole ranking), only for a run one may see
                "in_other": rank_other if other_visible else None,
                "in_other_top": (rank_other is not None and rank_other <= depth)
                if other_visible
                else None,
            }
        )
    column["rows"] = rows
    if not other_visible:
        column["other_note"] = (
            "where the other run ranked these documents is not shown (it is another "
            "researcher's run)"
        )
    return column


def topic_versus(
    *,
    campaign: Campaign,
    version: QrelsVersion,
    a: str = "",
    b: str = "",
    qid: str,
    depth: int | None = None,
    user: UserLike,
    measure: str = "",
    sort: str = "diff",
) -> dict[str, Any]:
    """Both rankings of topic ``qid`` to ``depth`` (default POOLJUDGE_VERSUS_DEPTH, at most
    POOLJUDGE_VERSUS_MAX_DEPTH), side by side.

    Each column: ``{run, score, shown, retrieved, rows}``; a row ``{rank, docid, title, grade,
    judged, relevant, in_other, in_other_top}``: grade in ``version`` (None: unjudged, a
    negative grade, "pooled but not judged", included), relevant when grade >= the campaign's
    relevance threshold, ``in_other`` the document's rank in the other run's whole ranking
    (None: the other run did not retrieve it), ``in_other_top`` whether that rank is within
    ``depth``. A column of another researcher's run has no rows (``note`` says why), and the
    other column then has no ``in_other``. Also: the topic statement, its number of relevant
    documents, the relevant documents neither run has in its top ``depth``, and the previous and
    next topics in ``sort`` order of the topic list (``run_versus``)."""
    _check_sort(sort)
    depth = _depth(depth)
    a, b, run_a, run_b = _pair(campaign, version, user, a, b)
    # a NUL byte is refused by PostgreSQL in any query: no topic has one
    topic = None if "\x00" in qid else Topic.objects.filter(campaign=campaign, qid=qid).first()
    if topic is None:
        shown = qid[:60].replace("\x00", "")
        raise InvalidInput(
            f"qid: no topic {shown!r} in this campaign",
            [Problem.at("qid", f"{shown!r} is not a topic of this campaign")],
        )
    scores = _scores(campaign, version, measure, user, (a, run_a), (b, run_b))
    score_a, score_b = scores.pair(qid)
    # this topic's judgments only (not the whole qrels version)
    qrels = dict(
        QrelsEntry.objects.filter(version=version, topic=topic).values_list("docid", "grade")
    )
    threshold = campaign.relevance_threshold
    relevant = {d for d, g in qrels.items() if g >= threshold}
    ranking_a, ranking_b = _ranking(run_a, topic), _ranking(run_b, topic)
    see_a, see_b = sees_run(run_a, user), sees_run(run_b, user)
    shown_ids = (ranking_a[:depth] if see_a else []) + (ranking_b[:depth] if see_b else [])
    titles = {
        d: (t[:TITLE_CHARS] + "…" if len(t) > TITLE_CHARS else t)
        for d, t in Document.objects.filter(campaign=campaign, docid__in=set(shown_ids))
        .exclude(title="")
        .values_list("docid", "title")
    }
    top = set(ranking_a[:depth]) | set(ranking_b[:depth])
    order = [r["qid"] for r in _topic_rows(campaign, scores, sort)]
    here = order.index(qid) if qid in order else None
    return {
        "campaign": campaign.pk,
        "qrels_version": version.number,
        "qrels_kind": version.kind_label,
        "qrels_hash": version.content_hash,
        "mode": "honest",
        "measure": scores.measure,
        "a": a,
        "b": b,
        "difference": DIFFERENCE,
        "qid": topic.qid,
        "title": topic.title,
        "description": topic.description,
        "narrative": topic.narrative,
        "depth": depth,
        "relevance_threshold": threshold,
        "num_relevant": len(relevant),
        "num_judged": sum(1 for g in qrels.values() if g >= 0),
        "relevant_missed_by_both": len(relevant - top),
        "score_a": score_a,
        "score_b": score_b,
        "diff": score_a - score_b if score_a is not None and score_b is not None else None,
        "columns": [
            _column(
                a, see_a, ranking_a, ranking_b, see_b, depth, qrels, threshold, titles, score_a
            ),
            _column(
                b, see_b, ranking_b, ranking_a, see_a, depth, qrels, threshold, titles, score_b
            ),
        ],
        "sort": sort,
        "prev": order[here - 1] if here is not None and here > 0 else None,
        "next": order[here + 1] if here is not None and here + 1 < len(order) else None,
        "position": here + 1 if here is not None else None,
        "n_topics": len(order),
    }
