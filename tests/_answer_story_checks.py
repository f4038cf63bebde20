"""The checks of the retrieval team's answers (issue 34, point 7), played end to end through the
Python client against a live server by tests/test_rag_story.py right after the retrieval story
(one play of both: the retrieval story is most of the time): extractive answer runs over each
setup's top paragraphs and one that cites carelessly, a nugget bank imported and published, the
embedding judge over every item, a stratified human sample correcting its scores, every item
judged, and the Answers board with intervals; docs/guide/answers.md quotes what it gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judging.demo.rag.answers import CARELESS


def _rows(board: Any) -> dict[str, Any]:
    return {row["run"]: row for row in board["rows"]}


def check_the_answers(story: Any) -> None:
    """What the answers' story gives, and docs/guide/answers.md quoting it."""
    rows = _rows(story.board)
    assert set(rows) == {"bm25-answers", "dense-answers", "hybrid-answers", CARELESS}
    for row in rows.values():
        assert row["nugget_judged"] == row["nugget_pairs"] > 0
        assert row["support_judged"] == row["support_pairs"] > 0
        for score in (*row["nuggets"].values(), *row["support"].values()):
            if score["mean"] is not None and score["low"] is not None:
                assert score["low"] <= score["mean"] <= score["high"]
    careless, hybrid = rows[CARELESS], rows["hybrid-answers"]
    # the careless system says what the hybrid says, and its citations do not support it
    assert careless["nuggets"]["strict_vital_score"] == hybrid["nuggets"]["strict_vital_score"]
    assert careless["support"]["precision"]["high"] < hybrid["support"]["precision"]["low"]
    for kind, sample in story.samples.items():
        assert sample["ready"] and sample["n_sampled"] == sample["budget"] < sample["n_items"]
        measure = "strict_vital_score" if kind == "nugget_assignment" else "precision"
        truth = {
            r["run"]: r["nuggets" if kind == "nugget_assignment" else "support"]
            for r in story.board["rows"]
        }
        for row in sample["runs"]:
            cell = row["measures"][measure]
            # every corrected interval covers the score from every item judged
            assert cell["ppi"]["low"] <= truth[row["run"]][measure]["mean"] <= cell["ppi"]["high"]
    check_the_guide(story)


GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "answers.md"


def _block(text: str, name: str) -> str:
    start = text.index(f"<!-- figures: {name} -->")
    return text[start : text.index("<!-- end figures -->", start)]


def _ci(cell: dict[str, Any], value: str = "mean") -> str:
    return f"{cell[value]:.3f} [{cell['low']:.3f}, {cell['high']:.3f}]"


def expected(story: Any) -> dict[str, list[str]]:
    """The lines each figures block of the guide prints."""
    board = [
        "| system | strict vital recall [95% CI] | strict all recall [95% CI] | "
        "support precision [95% CI] | words | R@5 of its references |"
    ]
    for run, row in _rows(story.board).items():
        n, s = row["nuggets"], row["support"]
        board.append(
            f"| {run} | {_ci(n['strict_vital_score'])} | {_ci(n['strict_all_score'])} | "
            f"{_ci(s['precision'])} | {s['words']['mean']:.1f} | {row['retrieval']:.3f} |"
        )
    out = {"answers-board": board}
    truth = _rows(story.board)
    for kind, measure, part, block in (
        ("nugget_assignment", "strict_vital_score", "nuggets", "answers-corrected"),
        ("citation_support", "precision", "support", "support-corrected"),
    ):
        lines = [
            "| system | corrected [95% CI] | judge alone | sample alone [95% CI] | "
            "every item judged |"
        ]
        for row in story.samples[kind]["runs"]:
            c = row["measures"][measure]
            lines.append(
                f"| {row['run']} | {_ci(c['ppi'], 'value')} | {c['auto_only']:.3f} | "
                f"{_ci(c['human_only'], 'value')} | "
                f"{truth[row['run']][part][measure]['mean']:.3f} |"
            )
        out[block] = lines
    return out


def check_the_guide(story: Any) -> None:
    """docs/guide/answers.md prints the figures the story gives."""
    text = GUIDE.read_text(encoding="utf-8")
    wanted = expected(story)
    missing = [
        line for name, lines in wanted.items() for line in lines if line not in _block(text, name)
    ]
    assert not missing, "\n".join(missing)
    flat = " ".join(text.split())
    bank, samples = story.bank, story.samples
    nuggets, cited = samples["nugget_assignment"], samples["citation_support"]
    rows = _rows(story.board)
    ratios = []
    for row in samples["nugget_assignment"]["runs"]:
        c = row["measures"]["strict_vital_score"]
        ratios.append(
            (c["ppi"]["high"] - c["ppi"]["low"])
            / (c["human_only"]["high"] - c["human_only"]["low"])
        )
    # nugget recall follows the references' recall
    by = sorted(rows, key=lambda r: rows[r]["retrieval"])
    assert sorted(rows, key=lambda r: rows[r]["nuggets"]["strict_vital_score"]["mean"]) == by
    for figure in (
        f"{bank['nuggets']} nuggets over {bank['topics']} questions",
        f"{nuggets['n_sampled']} of its {nuggets['n_items']} (answer, nugget) items",
        f"{cited['n_sampled']} of its {cited['n_items']} (sentence, citation) items",
        f"{story.sample_judged} judgments",
        f"{story.judged} more",
        f"the {sum(r['support_pairs'] for r in rows.values())} cited sentences are "
        f"{samples['citation_support']['n_items']} items",
        f"({min(ratios):.2f}-{max(ratios):.2f} of its width)",
        f"the other {nuggets['n_items'] - nuggets['n_sampled']} items",
    ):
        assert figure in flat, figure
