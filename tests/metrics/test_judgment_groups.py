"""Qrels with judgment groups (trec_eval -R qrels_jg) and map_avgjg, P_avgjg, Rprec_mult_avgjg.

Checked three ways: hand-worked values, pytrec_eval run on each group's qrels and averaged per
topic, and (when TREC_EVAL points at a trec_eval 10.0 binary) its output byte for byte.
"""

from __future__ import annotations

import gzip
import os
import random
import subprocess
from pathlib import Path

import pytest
import pytrec_eval

from metrics.evaluation.judgment_groups import (
    JudgmentGroups,
    evaluate_jg,
    format_trec,
    read_qrels_jg,
)
from metrics.io import Run, read_run
from metrics.measures.names import UnknownMeasureError
from metrics.problems import InvalidInput
from tests._trec_eval_test_dir import needs_test_dir, trec_eval_test_dir

TREC_EVAL = os.environ.get("TREC_EVAL")
needs_binary = pytest.mark.skipif(
    not TREC_EVAL, reason="set TREC_EVAL to a trec_eval 10.0 binary to compare with it"
)

# Topic 1: three groups judge it differently; topic 2: one group.
QRELS_JG = b"""\
# topic 1, group A: d1, d3, d5 relevant (R = 3)
1 A d1 1
1 A d3 1
1 A d5 2
1 A d2 0
# group B: only d2 relevant (R = 1); d1 is not judged by B
1 B d2 1
1 B d4 0
# group C: nothing relevant (R = 0)
1 C d1 0
2 A d9 1
"""
# ranking of topic 1: d1 d2 d3 d4 (scores descending); topic 2: d8 d9
RUN = {"1": {"d1": 4.0, "d2": 3.0, "d3": 2.0, "d4": 1.0}, "2": {"d8": 2.0, "d9": 1.0}}


def _qrels_abc() -> JudgmentGroups:
    return read_qrels_jg(QRELS_JG)


# --------------------------------------------------------------------------------------------
# Reader


def test_reader_groups_topics_and_groups_in_byte_order() -> None:
    jg = _qrels_abc()
    assert jg.qids == ("1", "2")
    assert jg.groups == (("A", "B", "C"), ("A",))
    assert jg.num_groups == {"1": 3, "2": 1}
    assert jg.judgments("1") == {
        "A": {"d1": 1, "d2": 0, "d3": 1, "d5": 2},
        "B": {"d2": 1, "d4": 0},
        "C": {"d1": 0},
    }
    # qrels[j] holds the (j+1)-th group of every topic that has one
    assert [q.qids for q in jg.qrels] == [("1", "2"), ("1",), ("1",)]
    assert JudgmentGroups.from_dict(jg.to_dict()).to_dict() == jg.to_dict()


def test_reader_accepts_gzip_path_and_the_same_docid_in_two_groups(tmp_path: Path) -> None:
    p = tmp_path / "q.gz"
    p.write_bytes(gzip.compress(QRELS_JG))
    assert read_qrels_jg(p).to_dict() == _qrels_abc().to_dict()
    assert read_qrels_jg(str(p)).groups == _qrels_abc().groups


def test_reader_errors_carry_line_numbers() -> None:
    bad = b"1 A d1 1\n1 A d2\n1 A d3 x\n1 B d1 1\n1 A d1 0\n"
    with pytest.raises(InvalidInput) as e:
        read_qrels_jg(bad, source="q.txt")
    lines = [(p.line, p.message) for p in e.value.problems]
    assert lines[0][0] == 2 and "expected 4 fields" in lines[0][1]
    assert lines[1][0] == 3 and "grade 'x' is not an integer" in lines[1][1]
    # the structural problems come first; fix them and the duplicate in group A is found
    with pytest.raises(InvalidInput) as e:
        read_qrels_jg(b"1 A d1 1\n1 B d1 1\n\n1 A d1 0\n", source="q.txt")
    (p,) = e.value.problems
    assert p.line == 4
    assert "duplicate docid 'd1' for query '1' in judgment group 'A' (first on line 1)" in (
        p.message
    )
    assert str(e.value).startswith("q.txt line 4: duplicate docid")


def test_reader_rejects_empty_file_and_control_character_in_group() -> None:
    with pytest.raises(InvalidInput, match="no data lines"):
        read_qrels_jg(b"# only a comment\n\n")
    with pytest.raises(InvalidInput) as e:
        read_qrels_jg(b"1 A d1 1\n1 B\x01 d1 1\n")
    assert e.value.problems[0].line == 2
    assert "judgment group" in e.value.problems[0].message


# --------------------------------------------------------------------------------------------
# Hand-worked values


def test_hand_worked_two_groups_and_a_group_without_relevant_documents() -> None:
    res = evaluate_jg(
        _qrels_abc(),
        RUN,
        ["map_avgjg", "P_avgjg.1,2,5", "Rprec_mult_avgjg.0.2,1.0,2.0"],
    )
    assert res.measures == [
        "map_avgjg",
        "P_avgjg_1",
        "P_avgjg_2",
        "P_avgjg_5",
        "Rprec_mult_avgjg_0.20",
        "Rprec_mult_avgjg_1.00",
        "Rprec_mult_avgjg_2.00",
    ]
    pq = {m: v["1"] for m, v in res.per_query.items()}
    # ranking d1 d2 d3 d4.
    # A (R=3, d1 d3 d5 relevant): AP = (1/1 + 2/3) / 3 = 5/9; P@1 = 1, P@2 = 1/2, P@5 = 2/5
    # B (R=1, d2 relevant):       AP = (1/2) / 1 = 1/2;     P@1 = 0, P@2 = 1/2, P@5 = 1/5
    # C (R=0):                    everything 0, but C counts in the divisor (3 groups)
    assert pq["map_avgjg"] == pytest.approx((5 / 9 + 1 / 2 + 0) / 3, abs=1e-12)
    assert pq["P_avgjg_1"] == pytest.approx((1 + 0 + 0) / 3, abs=1e-12)
    assert pq["P_avgjg_2"] == pytest.approx((1 / 2 + 1 / 2 + 0) / 3, abs=1e-12)
    assert pq["P_avgjg_5"] == pytest.approx((2 / 5 + 1 / 5 + 0) / 3, abs=1e-12)
    # Rprec_mult at x: precision at c = (long)(x R + 0.9)
    # x=0.2: A c=(long)1.5=1 -> P@1 = 1;  B c=(long)1.1=1 -> 0;  C c=(long)0.9=0 -> 0
    # x=1.0: A c=3 -> P@3 = 2/3;           B c=1 -> 0;             C 0
    # x=2.0: A c=6 > 4 retrieved -> 2/6;   B c=2 -> P@2 = 1/2;     C 0
    assert pq["Rprec_mult_avgjg_0.20"] == pytest.approx(1 / 3, abs=1e-12)
    assert pq["Rprec_mult_avgjg_1.00"] == pytest.approx((2 / 3) / 3, abs=1e-12)
    assert pq["Rprec_mult_avgjg_2.00"] == pytest.approx((1 / 3 + 1 / 2) / 3, abs=1e-12)
    # topic 2, one group (d9 relevant, R=1; ranking d8 d9): AP = 1/2, P@1 = 0, P@2 = 1/2,
    # Rprec_mult 0.2 and 1.0: c=1 -> 0; 2.0: c=2 -> 1/2
    two = {m: v["2"] for m, v in res.per_query.items()}
    assert two["map_avgjg"] == 0.5
    assert (two["P_avgjg_1"], two["P_avgjg_2"], two["P_avgjg_5"]) == (0.0, 0.5, 0.2)
    assert two["Rprec_mult_avgjg_0.20"] == two["Rprec_mult_avgjg_1.00"] == 0.0
    assert two["Rprec_mult_avgjg_2.00"] == 0.5
    # summary: mean over the two topics
    assert res.num_q == 2
    assert res.aggregates["map_avgjg"] == pytest.approx(((5 / 9 + 1 / 2) / 3 + 0.5) / 2)
    assert res.aggregates["P_avgjg_2"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert res.num_groups == {"1": 3, "2": 1}


def test_only_two_groups_averaged_over_two() -> None:
    jg = JudgmentGroups.from_dict(
        {"1": {"A": {"d1": 1, "d3": 1, "d5": 1}, "B": {"d2": 1, "d4": 0}}}
    )
    res = evaluate_jg(jg, {"1": RUN["1"]}, ["map_avgjg", "P_avgjg_5"])
    # (5/9 + 1/2) / 2 = 19/36; (2/5 + 1/5) / 2 = 3/10
    assert res.per_query["map_avgjg"]["1"] == pytest.approx(19 / 36, abs=1e-12)
    assert res.per_query["P_avgjg_5"]["1"] == pytest.approx(3 / 10, abs=1e-12)


def test_topics_not_answered_are_left_out_or_score_zero_with_complete() -> None:
    run = {"1": RUN["1"]}
    res = evaluate_jg(_qrels_abc(), run, ["map_avgjg"])
    assert res.queries == ["1"] and res.num_q == 1
    full = evaluate_jg(_qrels_abc(), run, ["map_avgjg"], complete=True)
    assert full.queries == ["1", "2"] and full.per_query["map_avgjg"]["2"] == 0.0
    assert full.aggregates["map_avgjg"] == pytest.approx(res.aggregates["map_avgjg"] / 2)


def test_relevance_level_two() -> None:
    res = evaluate_jg(_qrels_abc(), RUN, ["map_avgjg"], relevance_level=2)
    # at level 2 only A's d5 is relevant (not retrieved): every group scores 0
    assert res.per_query["map_avgjg"] == {"1": 0.0, "2": 0.0}


def test_nickname_and_format() -> None:
    res = evaluate_jg(_qrels_abc(), Run.from_dict(RUN, tag="myrun"), ["qrels_jg"])
    assert res.measures[:4] == ["runid", "num_q", "map_avgjg", "P_avgjg_5"]
    assert res.measures[-1] == "Rprec_mult_avgjg_2.00" and len(res.measures) == 2 + 1 + 9 + 10
    text = format_trec(res, "myrun", per_query=True)
    lines = text.splitlines()
    assert lines[0] == f"{'map_avgjg':<22}\t1\t{(5 / 9 + 1 / 2) / 3:6.4f}"
    assert lines[2 * 20] == "runid                 \tall\tmyrun"
    assert lines[2 * 20 + 1] == "num_q                 \tall\t2"
    assert len(lines) == 2 * 20 + 2 + 20
    assert format_trec(res, per_query=False).splitlines()[0].endswith("\tall\tmyrun")


def test_measure_names_are_checked() -> None:
    with pytest.raises(UnknownMeasureError):
        evaluate_jg(_qrels_abc(), RUN, ["map"])
    with pytest.raises(ValueError, match="positive"):
        evaluate_jg(_qrels_abc(), RUN, ["P_avgjg.0,5"])
    with pytest.raises(ValueError, match="duplicate"):
        evaluate_jg(_qrels_abc(), RUN, ["P_avgjg.5,5"])
    with pytest.raises(ValueError, match="same name"):
        evaluate_jg(_qrels_abc(), RUN, ["Rprec_mult_avgjg.0.201,0.202"])
    with pytest.raises(ValueError, match="compat"):
        evaluate_jg(_qrels_abc(), RUN, ["map_avgjg"], compat=None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# pytrec_eval on each group, averaged


def _random_collection(
    rng: random.Random, *, all_answered: bool
) -> tuple[dict[str, dict[str, dict[str, int]]], dict[str, dict[str, float]]]:
    docs = [f"d{i}" for i in range(15)]
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    run: dict[str, dict[str, float]] = {}
    for t in range(rng.randint(1, 5)):
        q = str(100 + t)
        groups = rng.sample(["a", "b", "c", "jg10", "jg2"], rng.randint(1, 4))
        qrels[q] = {
            g: {d: rng.randint(-1, 3) for d in rng.sample(docs, rng.randint(1, 10))} for g in groups
        }
        if all_answered or rng.random() < 0.8 or not run:
            ids = rng.sample(docs, rng.randint(1, 12))
            run[q] = {d: float(rng.randint(0, 4)) for d in ids}
    if rng.random() < 0.3:
        run["999"] = {"d1": 1.0}  # a topic without judgments: ignored
    return qrels, run


PYTREC_NAMES = (
    [("map_avgjg", "map")]
    + [(f"P_avgjg_{k}", f"P_{k}") for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    + [
        (f"Rprec_mult_avgjg_{x:3.2f}", f"Rprec_mult_{x:3.2f}")
        for x in (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
    ]
)


@pytest.mark.parametrize("seed", range(150))
def test_matches_pytrec_eval_per_group_averaged(seed: int) -> None:
    rng = random.Random(seed)
    qrels, run = _random_collection(rng, all_answered=False)
    level = 1 if seed % 3 else 2
    res = evaluate_jg(qrels, run, ["qrels_jg"], relevance_level=level)
    evaluated = sorted(q for q in qrels if q in run)
    assert res.queries == evaluated
    sums: dict[str, dict[str, float]] = {
        ours: dict.fromkeys(evaluated, 0.0) for ours, _ in PYTREC_NAMES
    }
    depth = max(len(g) for g in qrels.values())
    for j in range(depth):
        group_qrels = {q: by[sorted(by)[j]] for q, by in qrels.items() if len(by) > j}
        ev = pytrec_eval.RelevanceEvaluator(
            group_qrels, {"map", "P", "Rprec_mult"}, relevance_level=level
        )
        for q, vals in ev.evaluate(run).items():
            for ours, theirs in PYTREC_NAMES:
                sums[ours][q] += vals[theirs]
    for ours, _ in PYTREC_NAMES:
        for q in evaluated:
            want = sums[ours][q] / len(qrels[q])
            assert res.per_query[ours][q] == pytest.approx(want, abs=1e-9), (ours, q)
        mean = sum(sums[ours][q] / len(qrels[q]) for q in evaluated) / len(evaluated)
        assert res.aggregates[ours] == pytest.approx(mean, abs=1e-9), ours


# --------------------------------------------------------------------------------------------
# The trec_eval 10.0 binary, byte for byte


def _write(
    tmp: Path, qrels: dict[str, dict[str, dict[str, int]]], run: dict[str, dict[str, float]]
) -> tuple[Path, Path]:
    qp, rp = tmp / "qrels_jg", tmp / "run"
    qp.write_text(
        "".join(
            f"{q} {g} {d} {grade}\n"
            for q, by in qrels.items()
            for g, judged in by.items()
            for d, grade in judged.items()
        )
    )
    rp.write_text(
        "".join(
            f"{q} Q0 {d} {i + 1} {s} tag{len(run)}\n"
            for q, ranking in run.items()
            for i, (d, s) in enumerate(ranking.items())
        )
    )
    return qp, rp


def _binary(qrels: Path, run: Path, *flags: str) -> str:
    assert TREC_EVAL is not None
    out = subprocess.run(
        [TREC_EVAL, *flags, "-q", "-m", "qrels_jg", "-R", "qrels_jg", str(qrels), str(run)],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


@needs_binary
@pytest.mark.parametrize("seed", range(40))
def test_output_is_trec_evals_byte_for_byte(seed: int, tmp_path: Path) -> None:
    rng = random.Random(1000 + seed)
    complete = seed % 2 == 1
    # trec_eval 10.0 stops on a qrels topic the run lacks unless -c: answer all without it
    qrels, run = _random_collection(rng, all_answered=not complete)
    level = 2 if seed % 5 == 0 else 1
    qp, rp = _write(tmp_path, qrels, run)
    flags = (["-c"] if complete else []) + (["-l", "2"] if level == 2 else [])
    res = evaluate_jg(
        read_qrels_jg(qp), read_run(rp), ["qrels_jg"], complete=complete, relevance_level=level
    )
    assert format_trec(res, None, per_query=True) == _binary(qp, rp, *flags)


@needs_test_dir()
@needs_binary
def test_trec_evals_own_test_files_byte_for_byte() -> None:
    test_dir = trec_eval_test_dir()
    assert test_dir is not None
    qp, rp = test_dir / "qrels.123", test_dir / "results.test"
    res = evaluate_jg(read_qrels_jg(qp), read_run(rp), ["qrels_jg"])
    ours = format_trec(res, None, per_query=True)
    assert ours == _binary(qp, rp)
    expected = test_dir / "out.test.qrels_jg"
    if expected.exists():  # the output trec_eval ships (without the per-query runid lines)
        assert ours.splitlines()[:20] == expected.read_text().splitlines()[:20]
