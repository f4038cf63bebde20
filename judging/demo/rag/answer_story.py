"""The retrieval team's answers, played through the Python client after its retrieval story
(issue 34, point 7; ``docs/guide/answers.md``, "The demo's answers").

The team answers each question from its setups' top 3 paragraphs with an extractive generator
(:mod:`.answers`), and submits a fourth system that cites carelessly; the admin imports a nugget
bank written from the planted truth and publishes it; the embedding judge labels every (answer,
nugget) and (sentence, cited paragraph) item; a stratified human sample of each kind is judged
and corrects the judge's scores; then every item is judged, and the leaderboard's Answers
section gives each system's nugget recall and citation support with intervals. The assessor is
simulated (:func:`.answers.assign`, :func:`.answers.support`) and judges through the queue.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judging.demo.rag.answers import answer_runs, assign, bank, jsonl, support
from judging.demo.rag.collection import build
from judging.demo.rag.retrieval import SETUPS
from pooljudge.client import Client

__all__ = [
    "AnswerFigures",
    "UnitJudging",
    "play_answers",
    "unit_decision",
]

GROUP = "answers"
SHOWN = ("bm25", "dense", "hybrid")
QRELS = 1  # the paragraphs' qrels version: the answers cite paragraphs
JUDGE = {"kind": "embedding", "name": "minilm-answers", "model": "all-MiniLM-L6-v2"}
BUDGETS = {"nugget_assignment": 60, "citation_support": 120}
SEED = 7

# what the simulated assessor decides for an item: (kind, what its screen shows) -> grade
UnitDecision = Callable[[str, Mapping[str, Any]], int]
# judges every item queued in a campaign; how many judgments it recorded
UnitJudging = Callable[[int, UnitDecision], int]


@dataclass
class AnswerFigures:
    """What the answers' story gives, for the docs and the tests to read."""

    runs: list[str] = field(default_factory=list)
    bank: Mapping[str, Any] = field(default_factory=dict)  # the published version
    judge_runs: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # kind -> counts
    samples: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # kind -> report
    sample_judged: int = 0
    queued: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # kind -> queued
    judged: int = 0  # judgments after the samples
    board: Mapping[str, Any] = field(default_factory=dict)


def unit_decision(kind: str, shown: Mapping[str, Any]) -> int:
    """The simulated assessor's grade of an answer item from what its screen shows."""
    if kind == "nugget_assignment":
        return assign(str(shown["nugget_text"]), [str(s) for s in shown["answer"]])
    if kind == "citation_support":
        return support(str(shown["sentence"]), str(shown.get("segment_text", "")))
    raise ValueError(f"the demo's assessor does not judge {kind!r} items")


def _corrected(report: Mapping[str, Any], measure: str) -> str:
    cells = []
    for row in report.get("runs", []):
        ppi = row["measures"][measure]["ppi"]
        cells.append(f"{row['run']} {ppi['value']:.3f} [{ppi['low']:.3f}, {ppi['high']:.3f}]")
    return "; ".join(cells)


def play_answers(
    admin: Client,
    team: Client,
    judging: UnitJudging,
    *,
    campaign: int,
    automatic: bool = True,
    say: Callable[[str], None] = print,
) -> AnswerFigures:
    """Play the answers' story on the retrieval story's campaign (its paragraphs' chunking and
    qrels v1 must exist). ``automatic`` False (the embedding extra is not installed): no judge,
    no sample; every item is judged by people."""
    collection = build()
    figures = AnswerFigures()
    cut = next(c for c in team.chunkings(campaign) if c.name == "paragraphs")
    passages = [(p.passage_id, p.text) for p in team.passages(cut)]
    runs = {s.name: s.retrieve(passages, collection.questions) for s in SETUPS if s.name in SHOWN}
    answers = answer_runs(runs, collection.questions, dict(passages))
    with tempfile.TemporaryDirectory() as folder:
        for tag, lines in answers.items():
            path = Path(folder) / f"{tag}.jsonl"
            path.write_bytes(jsonl(lines))
            run = team.submit_run(campaign, path, tag=tag, group=GROUP)
            # the references are a ranked run of paragraphs: scored on the paragraphs' qrels
            team.wait_for_evaluation(run, qrels_version=QRELS)
            figures.runs.append(tag)
    say(f"answer runs: {', '.join(figures.runs)} ({len(answers['hybrid-answers'])} answers each)")

    texts = {d.docid: d.text for d in collection.documents}
    drafted = admin.create_nugget_bank(
        campaign, bank(collection.questions, texts), note="written from the help centre"
    )
    figures.bank = admin.publish_nugget_bank(campaign, int(drafted["number"]))
    number = int(figures.bank["number"])
    say(f"nugget bank v{number} published: {drafted['nuggets']} nuggets")
    kinds: dict[str, int | None] = {"nugget_assignment": number, "citation_support": None}

    if automatic:
        judge = int(admin.create_judge(campaign, **JUDGE)["id"])
        for kind, version in kinds.items():
            figures.judge_runs[kind] = admin.run_judge(judge, kind=kind, bank=version)
            say(f"embedding judge over {kind}: {figures.judge_runs[kind]['total']} items")
        samples = {
            kind: admin.create_answer_sample(
                judge,
                kind=kind,
                bank=version,
                design="stratified",
                budget=BUDGETS[kind],
                seed=SEED,
            )
            for kind, version in kinds.items()
        }
        figures.sample_judged = judging(campaign, unit_decision)
        for kind, drawn in samples.items():
            figures.samples[kind] = team.answer_sample(int(drawn["sample"]))
        say(f"{figures.sample_judged} sampled items judged")
        say(
            "corrected strict vital recall: "
            + _corrected(figures.samples["nugget_assignment"], "strict_vital_score")
        )
        say(
            "corrected support precision: "
            + _corrected(figures.samples["citation_support"], "precision")
        )

    for kind, version in kinds.items():
        figures.queued[kind] = admin.queue_answer_items(campaign, kind, bank=version)
    figures.judged = judging(campaign, unit_decision)
    say(f"every answer item judged: {figures.judged} more judgments")
    figures.board = team.answer_board(campaign, bank=number, qrels_version=QRELS)
    return figures
