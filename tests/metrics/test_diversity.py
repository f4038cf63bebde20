"""ndeval's diversity measures (metrics.measures.diversity): hand-worked values, edge cases, the
reader's errors, the names, the CLI, and agreement with pyndeval / ir_measures (when installed) and
with a slow plain-Python reference written from the definitions."""

from __future__ import annotations

import argparse
import io
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from metrics.cli.diversity import register, run_diversity
from metrics.io import InvalidInput, Run
from metrics.measures.diversity import evaluate_diversity
from metrics.measures.diversity_names import (
    DEFAULT_MEASURES,
    DiversityMeasure,
    UnknownDiversityMeasure,
    parse_diversity_measure,
)
from metrics.measures.subtopic_qrels import SubtopicQrels, read_subtopic_qrels

L3 = math.log2(3)
L5 = math.log2(5)

# Topic 1: subtopics 1, 2, 3 have relevant documents; subtopic 4 only a non-relevant one, so it
# is not counted (|S| = 3). C's grade 2 counts as 1 (ndeval's binary assessment).
# Topic 2: judged, nothing relevant. Topic 3: judged, not in the run.
QRELS = """\
1 1 A 1
1 2 A 1
1 2 B 1
1 3 C 2
1 1 D 0
1 4 D 0
2 1 X 0
2 2 Y -1
3 1 Z 1
"""
# Run topic 1 ranks A, E (unjudged), B, C; topic 9 has no qrels.
RUN = """\
1 Q0 A 1 3.0 sysA
1 Q0 E 2 2.0 sysA
1 Q0 B 3 1.0 sysA
1 Q0 C 4 0.5 sysA
2 Q0 X 1 1.0 sysA
9 Q0 Q 1 1.0 sysA
"""

# Hand computation for topic 1, alpha = 0.5.
# Run gains g(r) = sum_s J(d_r,s) * 0.5^c(r,s):
#   r1 A: s1 (c=0) 1 + s2 (c=0) 1 = 2;  r2 E: 0;  r3 B: s2 (c=1) 0.5;  r4 C: s3 (c=0) 1.
# Greedy ideal over judged docs A, B, C, D (docno order):
#   rank 1: A=2, B=1, C=1, D=0 -> A; weights s1=s2=0.5
#   rank 2: B=0.5, C=1, D=0 -> C; s3=0.5;   rank 3: B=0.5, D=0 -> B;   rank 4: D=0.
#   ideal gains 2, 1, 0.5, 0.
DCG2 = 2 + 0 / L3
IDCG2 = 2 + 1 / L3
DCG4 = 2 + 0 / L3 + 0.5 / 2 + 1 / L5
IDCG4 = 2 + 1 / L3 + 0.5 / 2 + 0 / L5
ERR4 = 2 / 1 + 0 / 2 + 0.5 / 3 + 1 / 4
IERR4 = 2 / 1 + 1 / 2 + 0.5 / 3 + 0 / 4
# ideal-ideal normalisers, |S| = 3: every doc relevant to all subtopics, gains 3 * 0.5^(r-1)
II_D4 = 3 * (1 + 0.5 / L3 + 0.25 / 2 + 0.125 / L5)
II_E4 = 3 * (1 + 0.5 / 2 + 0.25 / 3 + 0.125 / 4)

HAND = {
    "alpha_nDCG@2": DCG2 / IDCG2,  # 0.760188
    "alpha_nDCG@4": DCG4 / IDCG4,  # 0.930491
    "alpha_nDCG@10": DCG4 / IDCG4,  # the run and the ideal both end at 4 documents
    "alpha_DCG@4": DCG4 / II_D4,
    "ERR_IA@4": ERR4 / II_E4,  # 2.416667 / 4.09375 = 0.590331
    "nERR_IA@4": ERR4 / IERR4,  # 2.416667 / 2.666667 = 0.90625
    "ERR_IA@1": 2.0,  # ndeval does not normalise rank 1: g(1) = 2 (may exceed 1)
    "alpha_DCG@1": 2.0,
    "nERR_IA@1": 1.0,  # 2 / 2
    "alpha_nDCG@1": 1.0,
    "P_IA@2": 2 / (2 * 3),  # A covers s1, s2; E nothing
    "P_IA@4": 4 / (4 * 3),  # A 2 + B 1 + C 1 relevant (doc, subtopic) pairs
    "P_IA@10": 4 / (10 * 3),  # fewer than k retrieved: still divided by k
    "StRecall@2": 2 / 3,
    "StRecall@4": 3 / 3,
}


def _qrels() -> SubtopicQrels:
    return read_subtopic_qrels(QRELS.encode(), source="qrels")


def _run() -> Run:
    from metrics.io import read_run

    return read_run(RUN.encode(), source="run")


def test_hand_worked_values() -> None:
    res = evaluate_diversity(_qrels(), _run(), list(HAND))
    for name, want in HAND.items():
        assert res.per_query["1"][name] == pytest.approx(want, abs=1e-12), name
    assert res.per_query["1"]["nERR_IA@4"] == pytest.approx(0.90625)
    assert res.per_query["1"]["ERR_IA@4"] == pytest.approx(0.5903307888)


def test_topics_covered_missing_and_excluded() -> None:
    res = evaluate_diversity(_qrels(), _run(), ["alpha-nDCG@4", "strec@4"])
    # every qrels topic, numeric order; 3 is missing from the run and scores 0; 9 is excluded
    assert res.topics == ("1", "2", "3")
    assert res.missing_from_run == ("3",)
    assert res.excluded == ("9",)
    assert res.no_relevant == ("2",)
    for t in ("2", "3"):
        assert res.per_query[t] == {"alpha_nDCG@4": 0.0, "StRecall@4": 0.0}
    assert res.mean["alpha_nDCG@4"] == pytest.approx(DCG4 / IDCG4 / 3)
    assert any("scored 0: 3" in n for n in res.notes)
    assert any("not averaged: 9" in n for n in res.notes)
    # ndeval's default: only the qrels topics the run has (1 and 2; 2 has no relevant: 0)
    res2 = evaluate_diversity(_qrels(), _run(), ["alpha-nDCG@4"], complete=False)
    assert res2.topics == ("1", "2")
    assert res2.mean["alpha_nDCG@4"] == pytest.approx(DCG4 / IDCG4 / 2)


def test_grades_above_one_count_as_one() -> None:
    q1 = SubtopicQrels.from_tuples([("1", "a", "d1", 1), ("1", "b", "d2", 1)])
    q4 = SubtopicQrels.from_tuples([("1", "a", "d1", 4), ("1", "b", "d2", 2)])
    run = {"1": {"d1": 2.0, "d2": 1.0}}
    ms = ["alpha-nDCG@5", "ERR-IA@5", "P-IA@5", "strec@5"]
    assert evaluate_diversity(q1, run, ms).mean == evaluate_diversity(q4, run, ms).mean
    # ... unless rel=2 asks for grade >= 2: then only d1 (4) and d2 (2) both still count;
    # with rel=3 only subtopic a is relevant: |S| = 1, d1 covers it at rank 1
    r = evaluate_diversity(q4, run, ["StRecall(rel=3)@5", "P_IA(rel=3)@5"])
    assert r.mean == {"StRecall(rel=3)@5": 1.0, "P_IA(rel=3)@5": 1 / 5}


def test_greedy_ideal_ties_go_to_the_largest_docno() -> None:
    # A {s1,s2}, B {s3,s4}, C {s1,s3}: all gain 2 at rank 1; ndeval takes the largest docno C.
    # Then A = 0.5 + 1 = 1.5, B = 0.5 + 1 = 1.5 -> B (larger); then A = 0.5 + 1 = 1.5.
    # Ideal gains 2, 1.5, 1.5 (the true ideal A, B, C has 2, 2, 1).
    # Run A, B, C: gains 2, 2, 0.5 + 0.5 = 1.
    q = SubtopicQrels.from_tuples(
        [
            *[("1", "1", "A", 1), ("1", "2", "A", 1), ("1", "3", "B", 1), ("1", "4", "B", 1)],
            *[("1", "1", "C", 1), ("1", "3", "C", 1)],
        ]
    )
    run = {"1": {"A": 3.0, "B": 2.0, "C": 1.0}}
    res = evaluate_diversity(q, run, ["alpha-nDCG@3", "nERR-IA@3"])
    want = (2 + 2 / L3 + 1 / 2) / (2 + 1.5 / L3 + 1.5 / 2)
    assert res.mean["alpha_nDCG@3"] == pytest.approx(want)
    assert res.mean["alpha_nDCG@3"] > 1  # ndeval's greedy ideal is not always the best
    assert res.mean["nERR_IA@3"] == pytest.approx((2 + 2 / 2 + 1 / 3) / (2 + 1.5 / 2 + 1.5 / 3))


def test_alpha_changes_the_novelty_discount() -> None:
    # one subtopic, two relevant documents: g = 1, (1 - alpha)
    q = SubtopicQrels.from_tuples([("1", "1", "a", 1), ("1", "1", "b", 1)])
    run = {"1": {"a": 2.0, "b": 1.0}}
    for alpha in (0.0, 0.2, 0.5, 1.0):
        m = f"alpha_nDCG(alpha={alpha})@2"
        res = evaluate_diversity(q, run, [m, f"alpha_DCG(alpha={alpha})@2"])
        name = parse_diversity_measure(m).name
        assert res.mean[name] == pytest.approx(1.0)  # the run is ideal
        dname = parse_diversity_measure(f"alpha_DCG(alpha={alpha})@2").name
        # DCG = 1 + (1-a)/log2 3 over the ideal ideal |S| * (1 + (1-a)/log2 3): 1
        assert res.mean[dname] == pytest.approx(1.0)


def test_judged_only_removes_unjudged_documents() -> None:
    # without the filter E (unjudged) takes rank 2; with it B moves to rank 2
    res = evaluate_diversity(_qrels(), _run(), ["P_IA@2", "P_IA(judged_only=True)@2"])
    assert res.per_query["1"]["P_IA@2"] == pytest.approx(2 / 6)
    assert res.per_query["1"]["P_IA(judged_only=True)@2"] == pytest.approx(3 / 6)


def test_ci_is_lazy_and_optional() -> None:
    res = evaluate_diversity(_qrels(), _run(), ["strec@4"], ci_level=0.95)
    assert res.ci is not None
    lo, hi = res.ci["StRecall@4"]
    assert 0.0 <= lo <= res.mean["StRecall@4"] <= hi <= 1.0
    code = (
        "import sys, metrics.measures.diversity, metrics.cli.diversity; "
        "print('scipy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------------------------
# reader


def test_reader_reports_every_bad_line() -> None:
    text = (
        "# a comment\n"
        "1 1 A 1\n"
        "\n"
        "1 1 B\n"  # line 4: 3 fields
        "1 1 C x\n"  # line 5: grade not an integer
        "1 1 A 0\n"  # line 6: duplicate of line 2
        "1 1 D 1 extra\n"  # line 7: 5 fields
        "1 2 A 1.5\n"  # line 8: not an integer
    )
    with pytest.raises(InvalidInput) as err:
        read_subtopic_qrels(text.encode(), source="sub.qrels")
    probs = err.value.problems
    assert [p.line for p in probs] == [4, 5, 6, 7, 8]
    assert "expected 4 fields" in probs[0].message and "found 3" in probs[0].message
    assert "'x' is not an integer" in probs[1].message
    assert "duplicate" in probs[2].message and "first on line 2" in probs[2].message
    assert "found 5" in probs[3].message
    assert str(err.value).startswith("sub.qrels line 4:")


def test_reader_empty_and_gzip(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no data lines"):
        read_subtopic_qrels(b"# nothing\n\n", source="e")
    import gzip

    p = tmp_path / "q.gz"
    p.write_bytes(gzip.compress(QRELS.encode()))
    q = read_subtopic_qrels(str(p))
    assert set(q.topics) == {"1", "2", "3"}
    t1 = q.topics["1"]
    assert t1.subtopics == ("1", "2", "3", "4")
    assert t1.actual_subtopics() == 3
    assert [d.decode() for d in t1.docids.tolist()] == ["A", "B", "C", "D"]


# --------------------------------------------------------------------------------------------
# names


@pytest.mark.parametrize(
    ("text", "kind", "k", "alpha"),
    [
        ("alpha_nDCG@20", "alpha_nDCG", 20, 0.5),
        ("alpha_nDCG(alpha=0.5)@20", "alpha_nDCG", 20, 0.5),
        ("ALPHA_NDCG(alpha=0.3)@10", "alpha_nDCG", 10, 0.3),
        ("\u03b1_nDCG@5", "alpha_nDCG", 5, 0.5),
        ("alpha-nDCG@20", "alpha_nDCG", 20, 0.5),
        ("alpha-DCG@20", "alpha_DCG", 20, 0.5),
        ("ERR_IA@20", "ERR_IA", 20, 0.5),
        ("err-ia@20", "ERR_IA", 20, 0.5),
        ("nERR_IA@20", "nERR_IA", 20, 0.5),
        ("nERR-IA@5", "nERR_IA", 5, 0.5),
        ("P_IA@20", "P_IA", 20, 0.5),
        ("P-IA@10", "P_IA", 10, 0.5),
        ("StRecall@20", "StRecall", 20, 0.5),
        ("strec@20", "StRecall", 20, 0.5),
        ("STREC@5", "StRecall", 5, 0.5),
    ],
)
def test_names_both_styles(text: str, kind: str, k: int, alpha: float) -> None:
    m = parse_diversity_measure(text)
    assert (m.kind, m.cutoff, m.alpha) == (kind, k, alpha)
    assert parse_diversity_measure(m.name) == m
    assert parse_diversity_measure(m.ndeval_name) == m


def test_names_canonical_forms() -> None:
    m = parse_diversity_measure("alpha_nDCG(alpha=0.5)@20")
    assert (m.name, m.ndeval_name) == ("alpha_nDCG@20", "alpha-nDCG@20")
    m = parse_diversity_measure("alpha-nDCG(alpha=0.25,judged_only=true,rel=2)@5")
    assert m.name == "alpha_nDCG(alpha=0.25,judged_only=True,rel=2)@5"
    assert parse_diversity_measure("strec(cutoff=7)") == DiversityMeasure("StRecall", 7)
    assert [parse_diversity_measure(x).ndeval_name for x in DEFAULT_MEASURES] == list(
        DEFAULT_MEASURES
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("nDCG@20", "known: ir_measures style"),
        ("alpha-nDCG", "a cutoff is needed"),
        ("ERR-IA@0", "must be an integer >= 1"),
        ("ERR-IA@x", "must be an integer >= 1"),
        ("P_IA(alpha=0.5)@5", "unknown parameter 'alpha'"),
        ("alpha_nDCG(alpha=2)@5", "alpha must be in [0, 1]"),
        ("alpha_nDCG(rel=0)@5", "rel must be >= 1"),
        ("alpha_nDCG(beta=1)@5", "unknown parameter 'beta'"),
    ],
)
def test_name_errors(text: str, says: str) -> None:
    with pytest.raises(UnknownDiversityMeasure) as err:
        parse_diversity_measure(text)
    assert says in str(err.value)
    if says.startswith("known"):
        for name in ("alpha_nDCG@k", "ERR_IA@k", "strec@k", "StRecall@k", "nERR-IA@k"):
            assert name in str(err.value)


# --------------------------------------------------------------------------------------------
# CLI


def _cli(argv: list[str]) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="m")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    out = io.StringIO()
    code = run_diversity(args, out)
    return code, out.getvalue()


# written by conftest's ``files`` fixture: files["sub"], files["run"]
FILES = {"sub.qrels": QRELS, "run.txt": RUN}


def test_cli_ndeval_format(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _cli(["diversity", *files.values(), "-q"])
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "runid,topic," + ",".join(DEFAULT_MEASURES)
    assert [ln.split(",")[1] for ln in lines[1:]] == ["1", "2", "3", "amean"]
    row1 = dict(zip(lines[0].split(","), lines[1].split(","), strict=True))
    assert row1["runid"] == "sysA"
    assert row1["strec@5"] == "1.000000"
    assert row1["P-IA@5"] == f"{4 / 15:.6f}"
    assert row1["nERR-IA@5"] == "0.906250"
    err = capsys.readouterr().err
    assert "not in the run scored 0: 3" in err and "not averaged: 9" in err
    code, out = _cli(["diversity", *files.values()])
    assert [ln.split(",")[1] for ln in out.splitlines()] == ["topic", "amean"]


def test_cli_json_and_measures(files: dict[str, str]) -> None:
    code, out = _cli(
        [
            "diversity",
            *files.values(),
            "-m",
            "alpha_nDCG@4",
            "-m",
            "ERR-IA@4",
            "--format",
            "json",
            "-q",
        ]
    )
    assert code == 0
    doc = json.loads(out)["runs"][0]
    assert doc["run"] == "sysA"
    assert doc["measures"] == ["alpha_nDCG@4", "ERR_IA@4"]
    assert doc["topics_averaged"] == ["1", "2", "3"]
    assert doc["missing_from_run_scored_0"] == ["3"]
    assert doc["excluded_run_topics_without_qrels"] == ["9"]
    assert doc["per_query"]["1"]["alpha_nDCG@4"] == pytest.approx(DCG4 / IDCG4)
    assert doc["mean"]["ERR_IA@4"] == pytest.approx(ERR4 / II_E4 / 3)
    code, out = _cli(
        ["diversity", *files.values(), "-m", "ERR-IA@4", "--run-topics-only", "--format", "json"]
    )
    assert json.loads(out)["runs"][0]["topics_averaged"] == ["1", "2"]


def test_cli_errors(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _cli(["diversity", *files.values(), "-m", "nDCG@5"])
    assert code == 4
    assert "known:" in capsys.readouterr().err
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 1 A 1\n1 1 A\n")
    with pytest.raises(InvalidInput) as err:
        _cli(["diversity", str(bad), files["run"]])
    assert err.value.problems[0].line == 2


# --------------------------------------------------------------------------------------------
# Independent checks on random data


def _random_case(seed: int) -> tuple[list[tuple[str, str, str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    qrels: list[tuple[str, str, str, int]] = []
    run: dict[str, dict[str, float]] = {}
    for t in range(1, rng.randint(2, 6)):
        topic = str(t)
        ndocs = rng.randint(1, 30)
        nsub = rng.randint(1, 6)
        docs = [f"d{rng.randint(0, 60)}" for _ in range(ndocs)]
        for d in sorted(set(docs)):  # sorted: set order varies with the hash seed
            for s in range(1, nsub + 1):
                if rng.random() < 0.5:
                    qrels.append((topic, str(s), d, rng.choice([0, 0, 1, 1, 2, 3])))
        if rng.random() < 0.9:
            # distinct scores: pyndeval breaks score ties by docno ascending, trec_eval descending
            pool = [f"d{i}" for i in range(70)]
            chosen = rng.sample(pool, rng.randint(1, 40))
            scores = rng.sample(range(1000), len(chosen))
            run[topic] = {d: float(s) for d, s in zip(chosen, scores, strict=True)}
    if not qrels:
        qrels.append(("1", "1", "d0", 1))
    return qrels, run


def _reference(
    qrels: list[tuple[str, str, str, int]],
    run: dict[str, dict[str, float]],
    kind: str,
    k: int,
    alpha: float = 0.5,
) -> dict[str, float]:
    """Slow plain-Python ndeval, written from the definitions in the module docstring."""
    out: dict[str, float] = {}
    for topic in sorted({q[0] for q in qrels}, key=int):
        J: dict[str, set[str]] = {}
        for t, s, d, g in qrels:
            if t == topic:
                J.setdefault(d, set())
                if g >= 1:
                    J[d].add(s)
        S = set().union(*J.values())
        ranked = sorted(
            run.get(topic, {}), key=lambda d: (-run[topic][d], [-b for b in d.encode()])
        )
        if not S:
            out[topic] = 0.0
            continue

        def gains(docs: list[str], J: dict[str, set[str]] = J) -> list[float]:
            seen: dict[str, int] = {}
            gs = []
            for d in docs:
                g = 0.0
                for s in sorted(J.get(d, set())):
                    g += (1 - alpha) ** seen.get(s, 0)
                    seen[s] = seen.get(s, 0) + 1
                gs.append(g)
            return gs

        def ideal(J: dict[str, set[str]] = J, S: set[str] = S) -> list[float]:
            left = sorted(J)
            w = dict.fromkeys(S, 1.0)
            gs: list[float] = []
            while left and len(gs) < k:
                best, where = -1.0, ""
                for d in left:
                    sc = 0.0  # in subtopic order, as ndeval sums (float ties depend on it)
                    for s in sorted(J[d], key=int):
                        sc += w[s]
                    if sc > best or (sc == best and d.encode() > where.encode()):
                        best, where = sc, d
                left.remove(where)
                for s in J[where]:
                    w[s] *= 1 - alpha
                gs.append(best)
            return gs

        top = ranked[:k]
        if kind in ("alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA"):
            disc = (lambda r: 1 / math.log2(r + 1)) if "DCG" in kind else (lambda r: 1 / r)
            raw = sum(g * disc(r) for r, g in enumerate(gains(top), start=1))
            if kind in ("alpha_DCG", "ERR_IA"):
                ii = sum(len(S) * (1 - alpha) ** (r - 1) * disc(r) for r in range(1, k + 1))
                out[topic] = raw if k == 1 else raw / ii
            else:
                best = sum(g * disc(r) for r, g in enumerate(ideal(), start=1))
                out[topic] = raw / best if raw else 0.0
        elif kind == "P_IA":
            out[topic] = sum(len(J.get(d, set())) for d in top) / (k * len(S))
        else:
            covered = set().union(set(), *(J.get(d, set()) for d in top))
            out[topic] = len(covered) / len(S)
    return out


KINDS = ["alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA", "P_IA", "StRecall"]


@pytest.mark.parametrize("seed", range(40))
def test_matches_plain_reference(seed: int) -> None:
    qrels, run = _random_case(seed)
    q = SubtopicQrels.from_tuples(qrels)
    alpha = [0.5, 0.3, 0.8, 1.0][seed % 4]
    ks = [1, 3, 5, 10, 20, 25]
    ms = [DiversityMeasure(kind, k, alpha=alpha) for kind in KINDS for k in ks]
    res = evaluate_diversity(q, run, ms)
    for m in ms:
        want = _reference(
            qrels, run, m.kind, m.cutoff, alpha if m.kind not in ("P_IA", "StRecall") else 0.5
        )
        got = {t: res.per_query[t][m.name] for t in want}
        assert got == pytest.approx(want, abs=1e-12), m.name


_ND = {
    "alpha_DCG": "alpha-DCG",
    "alpha_nDCG": "alpha-nDCG",
    "ERR_IA": "ERR-IA",
    "nERR_IA": "nERR-IA",
    "P_IA": "P-IA",
    "StRecall": "strec",
}


@pytest.mark.parametrize("seed", range(40))
def test_matches_pyndeval(seed: int) -> None:
    pyndeval = pytest.importorskip("pyndeval", reason="pyndeval (ndeval's C code) not installed")
    qrels, run = _random_case(seed)
    alpha = [0.5, 0.3, 0.8][seed % 3]
    ks = [1, 2, 5, 10, 20]
    names = [f"{nd}@{k}" for nd in _ND.values() for k in ks]
    # pyndeval numbers subtopics in first-seen order and sums gains in that order; in numeric
    # order, as ndeval.c (whose subtopic ids are numbers) and metrics.measures.diversity do, so that
    # ties that are exact only in arithmetic (alpha != 0.5) round the same way
    ordered = sorted(qrels, key=lambda q: int(q[1]))
    sq = [pyndeval.SubtopicQrel(t, s, d, g) for t, s, d, g in ordered]
    docs = [pyndeval.ScoredDoc(t, d, s) for t in run for d, s in run[t].items()]
    theirs = pyndeval.ndeval(sq, docs, names, alpha=alpha)
    ms = [DiversityMeasure(kind, k, alpha=alpha) for kind in _ND for k in ks]
    ours = evaluate_diversity(SubtopicQrels.from_tuples(qrels), run, ms, complete=False)
    assert set(theirs) == set(ours.topics)
    for m in ms:
        for t, vals in theirs.items():
            assert ours.per_query[t][m.name] == pytest.approx(
                vals[f"{_ND[m.kind]}@{m.cutoff}"], abs=1e-9
            ), (t, m.name)


@pytest.mark.parametrize("seed", range(10))
def test_matches_ir_measures(seed: int) -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures not installed")
    pytest.importorskip("pyndeval", reason="ir_measures computes these through pyndeval")
    qrels, run = _random_case(seed)
    names = [
        "alpha_nDCG@20",
        "alpha_nDCG(alpha=0.3)@10",
        "ERR_IA@20",
        "nERR_IA@5",
        "P_IA@10",
        "StRecall@20",
    ]
    measures = [ir_measures.parse_measure(n) for n in names]
    qr = [ir_measures.Qrel(t, d, g, s) for t, s, d, g in qrels]
    # ir_measures scores a qrels topic the run lacks 0, as complete=True does
    theirs: dict[tuple[str, str], float] = {}
    # one measure per call: ir_measures 0.4.3 hands its run iterator to the first pyndeval
    # invocation only, so a second parameter group (another alpha) in the same call gets zeros
    for measure in measures:
        for metric in ir_measures.iter_calc([measure], qr, run):
            theirs[(str(metric.measure), metric.query_id)] = metric.value
    ours = evaluate_diversity(SubtopicQrels.from_tuples(qrels), run, [str(m) for m in measures])
    assert theirs
    for (mname, t), v in theirs.items():
        name = parse_diversity_measure(mname).name
        assert ours.per_query[t][name] == pytest.approx(v, abs=1e-9), (mname, t)


def test_cli_through_metrics_main(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m metrics diversity`` as registered in metrics/cli/app.py, errors included."""
    from metrics.cli import app as cli

    assert "metrics.cli.diversity" in [getattr(r, "module", "") for r in cli.SUBCOMMANDS]
    out = io.StringIO()
    assert cli.main(["diversity", *files.values(), "-m", "strec@4"], out) == 0
    assert out.getvalue().splitlines()[-1] == "sysA,amean,0.333333"
    bad = Path(files["sub"]).with_name("bad.qrels")
    bad.write_text("1 1 A one\n")
    assert cli.main(["diversity", str(bad), files["run"]], io.StringIO()) == 3
    assert "bad.qrels line 1: grade 'one' is not an integer" in capsys.readouterr().err
