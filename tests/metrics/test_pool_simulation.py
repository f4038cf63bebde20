"""Pooling simulations: the CLI on small files, and the reference figures on TREC 2003 Robust.

Reference (DESIGN.md section 6, computed independently): robust03, topics 601-650, depth-100
pool of the 17 runs, qrels as the oracle, mean relevant documents found per topic after 100
judgments: docid order 5.6, rank order 17.2, MTF 19.4, MaxMean 20.6, Hedge (beta 0.1) 21.2.
"""

from __future__ import annotations

import io
import json

import pytest

from metrics.cli.app import main as cli_main
from metrics.cli.pool import load_rankings, parse_strata
from metrics.pooling.runs import parse_topic_spec
from metrics.pooling.simulation import simulate
from metrics.pooling.strategies import make_strategy
from tests._shared_data import SHARED_DATA, needs_shared_data


def _pool(argv, out=None):
    """``python -m metrics pool ARGV...`` through the CLI's entry point."""
    return cli_main(["pool", *argv], out)


ROBUST = SHARED_DATA / "robust03"
REFERENCE_AT_100 = {"docid": 5.6, "rank": 17.2, "mtf": 19.4, "maxmean": 20.6, "hedge": 21.2}


def test_topic_ranges_and_lists_expand_in_order():
    assert parse_topic_spec("601-603") == ["601", "602", "603"]
    assert parse_topic_spec("601,605,610-612") == ["601", "605", "610", "611", "612"]
    assert parse_topic_spec("7, 5-6,7") == ["7", "5", "6"]
    with pytest.raises(ValueError, match="empty topic range"):
        parse_topic_spec("650-601")
    with pytest.raises(ValueError, match="two integers"):
        parse_topic_spec("a-b")


def test_strata_are_read_as_depth_rate_pairs():
    assert parse_strata("10:1,30:0.5") == ((10, 1.0), (30, 0.5))
    with pytest.raises(ValueError, match="DEPTH:RATE"):
        parse_strata("10")


@pytest.fixture
def tiny(tmp_path):
    # Scores tie in run A: trec_eval order puts docid "a2" before "a1" (docid descending).
    (tmp_path / "A.run").write_text(
        "1 Q0 a1 1 5.0 A\n1 Q0 a2 2 5.0 A\n1 Q0 a3 3 1.0 A\n2 Q0 z 1 1.0 A\n"
    )
    (tmp_path / "B.run").write_text("1 Q0 b1 9 3.0 B\n1 Q0 a3 1 2.0 B\n")
    (tmp_path / "qrels").write_text("1 0 a1 1\n1 0 a3 2\n1 0 b1 0\n2 0 z 0\n")
    return tmp_path


def test_runs_are_ranked_as_trec_eval_ranks_them(tiny):
    runs = load_rankings([str(tiny / "A.run"), str(tiny / "B.run")], depth=2)
    assert runs == {"A": {"1": ["a2", "a1"], "2": ["z"]}, "B": {"1": ["b1", "a3"]}}


def test_simulate_command_prints_mean_relevant_found_per_budget(tiny):
    out = io.StringIO()
    code = _pool(
        [
            "simulate",
            "--qrels",
            str(tiny / "qrels"),
            "--runs",
            str(tiny / "A.run"),
            str(tiny / "B.run"),
            "--depth",
            "3",
            "--topics",
            "1",
            "--strategy",
            "rank",
            "docid",
            "--budget",
            "1",
            "3",
        ],
        out,
    )
    assert code == 0
    # rank order: a2 (1), b1 (1), a1 (2), a3 (2) -> relevant after 1: 0, after 3: 1
    # docid order: a1 a2 a3 b1 -> after 1: 1, after 3: 2
    assert out.getvalue().splitlines() == [
        "strategy\tbudget\ttopics\tmean_relevant_found",
        "rank\t1\t1\t0.0000",
        "rank\t3\t1\t1.0000",
        "docid\t1\t1\t1.0000",
        "docid\t3\t1\t2.0000",
    ]


def test_simulate_command_writes_json_with_per_topic_counts(tiny):
    out = io.StringIO()
    args = ["simulate", "--qrels", str(tiny / "qrels"), "--runs", str(tiny / "A.run")]
    args += ["--depth", "3", "--strategy", "hedge", "--budget", "2", "--format", "json"]
    assert _pool(args, out) == 0
    doc = json.loads(out.getvalue())
    assert doc["strategy"] == "hedge"
    assert doc["params"] == {"beta": 0.1}
    assert doc["per_topic"] == {"1": [1], "2": [0]}  # a2 (miss), a1 (hit)
    assert doc["mean_relevant_found"] == [0.5]


def test_build_command_writes_a_trec_pool_file(tiny):
    target = tiny / "pool.txt"
    args = ["build", "--runs", str(tiny / "A.run"), str(tiny / "B.run"), "--depth", "1"]
    assert _pool([*args, "-o", str(target)]) == 0
    assert target.read_text() == "1 Q0 a2\n1 Q0 b1\n2 Q0 z\n"


def test_build_command_pools_only_the_priority_run_of_each_group(tiny):
    (tiny / "groups.tsv").write_text("run\tgroup\nA\tg\nB\tg\n")
    out = io.StringIO()
    args = ["build", "--runs", str(tiny / "B.run"), str(tiny / "A.run"), "--depth", "1"]
    args += ["--groups", str(tiny / "groups.tsv"), "--per-group", "1"]
    assert _pool(args, out) == 0
    # no priority column: command-line order decides, so B (given first) is the group's run
    assert out.getvalue() == "1 Q0 b1\n"


def test_bad_input_is_reported_on_stderr_with_the_cli_exit_codes(tiny, capsys):
    args = ["build", "--runs", str(tiny / "missing.run"), "--depth", "5"]
    assert _pool(args) == 3
    assert "pool: error:" in capsys.readouterr().err
    args = ["build", "--runs", str(tiny / "A.run"), "--depth", "5", "--per-group", "1"]
    assert _pool([*args, "--strategy", "rank"]) == 2
    assert "depth strategy only" in capsys.readouterr().err


def test_pool_is_a_subcommand_of_the_metrics_cli(tiny):
    out = io.StringIO()
    args = ["pool", "build", "--runs", str(tiny / "B.run"), "--depth", "1", "--strategy", "rank"]
    assert cli_main(args, out) == 0
    assert out.getvalue() == "1 Q0 b1\n"


needs_robust = needs_shared_data("robust03", "qrels.txt")


@pytest.fixture(scope="module")
def robust_rankings(robust):
    """The Robust runs' rankings to depth 100, and the qrels (conftest's ``robust``)."""
    runs = load_rankings(sorted(str(p) for p in (ROBUST / "runs").glob("input.*.gz")), 100)
    return runs, robust.qrels.to_dict()


@pytest.mark.data
@needs_robust
@pytest.mark.parametrize(("name", "expected"), REFERENCE_AT_100.items())
def test_robust03_relevant_found_after_100_judgments_matches_the_reference(
    robust_rankings, name, expected
):
    runs, qrels = robust_rankings
    assert len(runs) == 17
    topics = parse_topic_spec("601-650")
    result = simulate(runs, qrels, make_strategy(name), depth=100, budgets=[100], topics=topics)
    assert len(result.found) == 50
    assert result.mean_found[0] == pytest.approx(expected, rel=0.05)


@pytest.mark.data
@needs_robust
def test_robust03_thompson_is_reproducible_and_beats_rank_order(robust_rankings):
    runs, qrels = robust_rankings
    topics = parse_topic_spec("601-650")

    def run(name, **params):
        strategy = make_strategy(name, **params)
        return simulate(runs, qrels, strategy, depth=100, budgets=[100], topics=topics)

    thompson = run("thompson", seed=1)
    assert thompson.found == run("thompson", seed=1).found
    assert thompson.mean_found[0] > run("rank").mean_found[0]


@pytest.mark.data
@needs_robust
@pytest.mark.parametrize("name", ["docid", "rank", "rrf", "borda", "mtf", "maxmean", "hedge"])
def test_robust03_judging_the_whole_pool_finds_every_pooled_relevant_document(
    robust_rankings, name
):
    runs, qrels = robust_rankings
    topics = parse_topic_spec("601-650")
    pooled_relevant = {
        q: sum(
            1
            for d in {d for r in runs.values() for d in r.get(q, [])[:100]}
            if qrels.get(q, {}).get(d, 0) >= 1
        )
        for q in topics
    }
    result = simulate(runs, qrels, make_strategy(name), depth=100, budgets=[10**6], topics=topics)
    assert {q: f[0] for q, f in result.found.items()} == pooled_relevant
