"""The retrieval team's story, played through the Python client (issue 33, point 5).

Every step is a call a team makes from a notebook or CI (``pooljudge.client``), against any
Pooljudge: ``manage.py load_demo --rag`` plays it in-process, ``tests/test_rag_story.py``
against a live test server, and ``docs/guide/rag.md`` prints what it gives. The assessors are
simulated (:mod:`.assessor`: the planted answer sentence, marked with the mouse as a person
would); everything else is what the service computes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from judging.demo.rag.assessor import answer_marks, grade
from judging.demo.rag.collection import CHUNKING_A, CHUNKING_B, RagCollection, build
from judging.demo.rag.retrieval import SETUPS, Setup
from pooljudge.client import Client, Leaderboard, QrelsVersion

__all__ = ["CAMPAIGN", "MEASURES", "Judging", "StoryFigures", "client_judging", "decide", "play"]

CAMPAIGN = "Demo: a retrieval team's golden set"
MEASURES = ["R@5", "RR@10", "nDCG@5", "P@5", "Judged@5"]
POOL_DEPTH = 10
SCALE = {0: "Not relevant", 1: "Related, does not answer", 2: "Answers the question"}
FIRST, SECOND = "paragraphs", "windows"  # the two chunkings' names (and the runs' groups)
JUDGED = "windows, holes judged"  # the board after the carried version's holes are judged
HOLES_DEPTH = 5
SHOWN = ("bm25", "dense", "hybrid")
REGRESSION = "bm25_nostem"  # a change that loses recall: stemming switched off
MAX_DROP = 0.02


@dataclass
class StoryFigures:
    """What the story gives, for the docs and the tests to read."""

    campaign: int = 0
    passages: dict[str, int] = field(default_factory=dict)  # chunking -> passages
    pool_size: int = 0
    judged: int = 0
    answers_marked: int = 0
    first: QrelsVersion | None = None
    carried: QrelsVersion | None = None
    completed: QrelsVersion | None = None  # the carried version with its holes judged
    holes: int = 0  # windows in the setups' top 5 the carried labels left unjudged
    invisible: tuple[int, int] = (0, 0)  # questions, relevant windows no setup retrieved in 5
    boards: dict[str, Leaderboard] = field(default_factory=dict)  # chunking -> board
    slices: dict[str, Leaderboard] = field(default_factory=dict)  # tag -> board on SECOND
    checks: dict[str, Any] = field(default_factory=dict)  # run -> CheckResult
    answers: Any = None  # the answers' story that may follow (rag.answer_story.AnswerFigures)


def _tag(setup: str, chunking: str) -> str:
    return f"{setup.replace('_', '-')}-{chunking}"


def _submit(
    team: Client,
    campaign: int,
    collection: RagCollection,
    chunking: str,
    setups: Sequence[Setup],
) -> list[Any]:
    """The setups' runs on the chunking's passages, submitted by the team: pooled or not as the
    campaign decides (open until its first pool, closed after)."""
    cut = next(c for c in team.chunkings(campaign) if c.name == chunking)
    passages = [(p.passage_id, p.text) for p in team.passages(cut)]
    runs = []
    for setup in setups:
        results = setup.retrieve(passages, collection.questions)
        runs.append(
            team.submit_run(
                campaign,
                results,
                tag=_tag(setup.name, chunking),
                group=chunking,
                description=setup.description,
            )
        )
    return runs


# what a simulated assessor decides for an item: (grade, answer spans marked)
Decision = tuple[int, list[tuple[int, int]]]
# judges every item queued in a campaign; how many judgments and answer spans it recorded
Judging = Callable[[int, Callable[[str, str, int, int], Decision]], tuple[int, int]]


def decide(collection: RagCollection) -> Callable[[str, str, int, int], Decision]:
    """The simulated assessor: for (question id, item id, start, end of the text shown), the
    grade from the planted answer, and the answer sentence marked when the passage answers."""
    questions = {q.qid: q for q in collection.questions}

    def decision(qid: str, item: str, start: int, end: int) -> Decision:
        question, docid = questions[qid], item.rsplit("#", 1)[0]
        given = grade(question, docid, start, end)
        return given, (answer_marks(question, docid, start, end) if given == 2 else [])

    return decision


def client_judging(assessors: Sequence[Client]) -> Judging:
    """Judging through the API, as the judging screen does: lease, grade, answers."""

    def judge_all(
        campaign: int, decision: Callable[[str, str, int, int], Decision]
    ) -> tuple[int, int]:
        judged = marked = 0
        for assessor in assessors:
            while (lease := assessor.next_item(campaign)) is not None:
                start, end = lease.passage or (0, len(lease.text))
                given, answers = decision(lease.qid, lease.docid, start, end)
                assessor.judge(lease, given, answers=answers)
                judged, marked = judged + 1, marked + len(answers)
        return judged, marked

    return judge_all


def play(
    admin: Client,
    team: Client,
    judging: Judging,
    *,
    name: str = CAMPAIGN,
    say: Callable[[str], None] = print,
) -> StoryFigures:
    """Play the story: ``admin`` sets the campaign up and publishes, ``team`` (a researcher)
    submits and reads, ``judging`` judges the pool (``client_judging``: through the API)."""
    collection = build()
    figures = StoryFigures()
    setups = [s for s in SETUPS if s.name in SHOWN]
    regression = next(s for s in SETUPS if s.name == REGRESSION)

    campaign = admin.create_campaign(
        name,
        description="Northwind Cloud's help centre: 40 customer questions, three retrieval "
        "setups, judged by passage (the demo of docs/guide/rag.md)",
        scale=SCALE,
        relevance_threshold=1,
        measures=MEASURES,
        pool_depth=POOL_DEPTH,
    ).id
    figures.campaign = campaign
    admin.upload_topics(
        campaign, {q.qid: {"title": q.text, "tags": list(q.tags)} for q in collection.questions}
    )
    admin.upload_documents(
        campaign, {d.docid: {"title": d.title, "text": d.text} for d in collection.documents}
    )
    for label, spec in ((FIRST, CHUNKING_A),):
        chunking = admin.create_chunking(campaign, label, chunker=spec)
        figures.passages[label] = chunking.num_passages
        say(f"chunking {label!r} ({chunking.spec}): {chunking.num_passages} passages")

    _submit(team, campaign, collection, FIRST, setups)
    pool = admin.request_pool(campaign, depth=POOL_DEPTH)
    figures.pool_size = pool.num_to_judge
    say(
        f"pool version {pool.number}: the three setups' top {POOL_DEPTH}, {pool.num_to_judge} "
        "passages to judge"
    )
    figures.judged, figures.answers_marked = judging(campaign, decide(collection))
    say(f"{figures.judged} judgments, {figures.answers_marked} answer spans marked")
    figures.first = admin.publish_qrels(campaign, note="the first golden set, by paragraph")
    figures.boards[FIRST] = team.leaderboard(
        campaign, qrels_version=figures.first.number, measures=MEASURES, group=FIRST
    )
    # the team's CI: a change (stemming switched off) checked against the baseline, on v1
    (change,) = _submit(team, campaign, collection, FIRST, [regression])
    _check(team, figures, change, FIRST, figures.first.number, say)

    # the team re-chunks: fixed windows; the judgments carry over by their spans
    windows = admin.create_chunking(campaign, SECOND, chunker=CHUNKING_B)
    figures.passages[SECOND] = windows.num_passages
    figures.carried = admin.carry_qrels(figures.first, SECOND)
    derivation = figures.carried.derivation
    assert derivation is not None
    say(f"chunking {SECOND!r} ({windows.spec}): {windows.num_passages} passages; {derivation.rule}")
    say("carried: " + ", ".join(f"{k} {v}" for k, v in derivation.overall.items()))
    runs = _submit(team, campaign, collection, SECOND, [*setups, regression])
    for run in runs:
        team.wait_for_evaluation(run, qrels_version=figures.carried.number)
    figures.boards[SECOND] = team.leaderboard(
        campaign, qrels_version=figures.carried.number, measures=MEASURES, group=SECOND
    )

    # the holes the carry-over left in the setups' top 5: judged, and published onto it
    holes = team.incompleteness(campaign, k=5, qrels_version=figures.carried.number, group=SECOND)
    figures.holes = holes["unjudged_union"]
    figures.invisible = (holes["with_invisible"], holes["invisible"])
    say(
        f"unjudged windows in the setups' top 5: {figures.holes}; relevant windows no setup "
        f"retrieved within 5: {holes['invisible']} in {holes['with_invisible']} questions"
    )
    admin.request_pool(campaign, depth=HOLES_DEPTH, runs=[str(r.id) for r in runs])
    judged, marked = judging(campaign, decide(collection))
    figures.judged += judged
    figures.answers_marked += marked
    figures.completed = admin.publish_qrels(campaign, onto=figures.carried)
    say(
        f"{judged} windows judged; qrels v{figures.completed.number} "
        f"({figures.completed.raw.get('minor_label')}): {figures.completed.raw.get('note')}"
    )
    version = figures.completed.number
    for run in runs:
        team.wait_for_evaluation(run, qrels_version=version)
    figures.boards[JUDGED] = team.leaderboard(
        campaign, qrels_version=version, measures=MEASURES, group=SECOND
    )
    for tag in ("lexical", "paraphrase", "factoid", "how-to", "numeric", "policy"):
        figures.slices[tag] = team.leaderboard(
            campaign, qrels_version=version, measures=MEASURES, group=SECOND, slice=tag
        )
    for run in (runs[-1], runs[[s.name for s in setups].index("hybrid")]):
        _check(team, figures, run, SECOND, version, say)
    return figures


def _check(
    team: Client,
    figures: StoryFigures,
    run: Any,
    chunking: str,
    version: int,
    say: Callable[[str], None],
) -> None:
    """The regression check of ``run`` against the team's BM25 on the same chunking."""
    result = team.check(
        run,
        baseline=_tag("bm25", chunking),
        max_drop=MAX_DROP,
        measures=["R@5"],
        qrels_version=version,
    )
    figures.checks[run.tag] = result
    say(f"check {run.tag} against bm25-{chunking} (qrels v{version}): {result.summary}")
