"""``python -m metrics evaluate`` on sampled qrels (issue 32, point 2): ``--compat
sample_eval`` prints what NIST's ``sample_eval.pl`` prints, byte for byte (the expected text was
printed by the script with Debian's perl 5.36; the script is not in this repository); trec_eval's
-1 convention is read as one uniform sample; a measure of complete qrels on sampled qrels is
warned about, naming the inferred measure, or refused under ``--strict``."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import zlib
from pathlib import Path

import pytest

from metrics.cli.app import main
from metrics.io.sampled import (
    DocState,
    read_sampled_qrels,
    sampled_from_qrels,
    write_sampled_qrels,
)
from metrics.measures.names import parse_measure
from metrics.measures.sampled_registry import inferred_for, parse_sampled
from tests.metrics.test_sample_eval import TOY_QRELS, TOY_RUN

# sample_eval.pl -q toy_qrels toy_run
SCRIPT_Q = (
    "infAP\t\t1\t\t0.7500\n"
    "infNDCG\t\t1\t\t0.7238\n"
    "iP10\t\t1\t\t0.3000\n"
    "iP50\t\t1\t\t0.0600\n"
    "iP1000\t\t1\t\t0.0030\n"
    "inum_rel_ret\t1\t        3.0000\n"
    "inum_rel\t1\t        2.5000\n"
    "num_ret\t\t1\t        5\n"
    "infAP\t\t2\t\t0.7407\n"
    "infNDCG\t\t2\t\t0.7654\n"
    "iP10\t\t2\t\t0.3000\n"
    "iP50\t\t2\t\t0.0600\n"
    "iP1000\t\t2\t\t0.0030\n"
    "inum_rel_ret\t2\t        2.9999\n"
    "inum_rel\t2\t        3.0000\n"
    "num_ret\t\t2\t        3\n"
    "infAP\t\tall\t\t0.7454\n"
    "infNDCG\t\tall\t\t0.7446\n"
    "iprec@rec0.00\tall\t\t1.0000\n"
    "iprec@rec0.10\tall\t\t1.0000\n"
    "iprec@rec0.20\tall\t\t1.0000\n"
    "iprec@rec0.30\tall\t\t1.0000\n"
    "iprec@rec0.40\tall\t\t1.0000\n"
    "iprec@rec0.50\tall\t\t1.0000\n"
    "iprec@rec0.60\tall\t\t1.0000\n"
    "iprec@rec0.70\tall\t\t1.0000\n"
    "iprec@rec0.80\tall\t\t1.0000\n"
    "iprec@rec0.90\tall\t\t0.8750\n"
    "iprec@rec1.00\tall\t\t0.3750\n"
    "iP10\t\tall\t\t0.3000\n"
    "iP50\t\tall\t\t0.0600\n"
    "iP1000\t\tall\t\t0.0030\n"
    "inum_rel_ret\tall\t        5.9999\n"
    "inum_rel\tall\t        5.5000\n"
    "num_ret\t\tall\t        8\n"
)
# sample_eval.pl toy_qrels toy_run -G 1=3 2=7: its first two lines
SCRIPT_G = "infAP\t\tall\t\t0.7454\ninfNDCG\t\tall\t\t0.7322\n"


@pytest.fixture
def toy(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "q").write_bytes(TOY_QRELS)
    (tmp_path / "r").write_bytes(TOY_RUN)
    return str(tmp_path / "q"), str(tmp_path / "r")


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(args, out)
    return code, out.getvalue(), capsys.readouterr().err


def test_compat_sample_eval_prints_the_scripts_bytes(toy, capsys) -> None:
    q, r = toy
    code, out, _ = _run(["evaluate", "--compat", "sample_eval", "-q", q, r], capsys)
    assert code == 0 and out == SCRIPT_Q
    code, out, _ = _run(["evaluate", "--compat", "sample_eval", q, r], capsys)
    assert out == SCRIPT_Q[SCRIPT_Q.index("infAP\t\tall") :]
    code, out, _ = _run(["evaluate", "--compat", "sample_eval", "-G", "1=3,2=7", q, r], capsys)
    assert out.startswith(SCRIPT_G)
    code, _, err = _run(["evaluate", "--compat", "sample_eval", "-m", "iP@10", q, r], capsys)
    assert code == 2 and "fixed set" in err


def test_five_columns_are_detected_and_inferred_measures_named_either_way(toy, capsys) -> None:
    q, r = toy
    code, out, err = _run(["evaluate", q, r, "-m", "xinfAP", "-m", "iP10", "-m", "iP@5"], capsys)
    assert code == 0
    assert out.split("\n")[:3] == [
        "xinfAP                \tall\t0.7454",
        "iP@10                 \tall\t0.3000",
        "iP@5                  \tall\t0.6000",
    ]
    assert "stratum 1: 3 of 3 sampled (100%); stratum 2: 3 of 5 sampled (60%)" in err


def test_a_complete_qrels_measure_on_a_sample_is_warned_or_refused(toy, capsys) -> None:
    q, r = toy
    code, out, err = _run(["evaluate", q, r, "-m", "xinfAP", "-m", "P@10"], capsys)
    assert code == 0 and "P@10" in out
    assert "P@10 reads the 2 pooled documents that were not sampled as unjudged" in err
    assert "use iP@10" in err
    code, out, err = _run(["evaluate", "--strict", q, r, "-m", "P@10"], capsys)
    assert code == 4 and out == "" and "--strict" in err and "use iP@10" in err
    # the same through trec_eval's -1 convention (four columns): the ordinary path warns too
    minus = Path(q).with_name("m1")
    write_sampled_qrels(sampled_from_qrels(read_sampled_qrels(q).to_qrels()), minus, format="trec")
    code, _, err = _run(["evaluate", str(minus), r, "-m", "AP", "-m", "Judged@10"], capsys)
    assert code == 0 and "use xinfAP" in err and "Judged@10 reads" not in err
    code, _, err = _run(["evaluate", "--strict", str(minus), r, "-m", "nDCG@10"], capsys)
    assert code == 4 and "infNDCG (over the whole ranking" in err


def test_trec_minus_one_is_one_uniform_sample_and_formats_round_trip(tmp_path) -> None:
    one = read_sampled_qrels(b"1 0 a 1\n1 0 b -1\n1 0 c 0\n")
    assert one.state("1", "b") is DocState.UNSAMPLED and one.state("1", "z") is DocState.NOT_POOLED
    assert one.totals() == {"1": (3, 2)}
    assert one.to_qrels().judgments("1") == {"a": 1, "b": -1, "c": 0}
    strata = read_sampled_qrels(TOY_QRELS)
    path = tmp_path / "s.gz"
    write_sampled_qrels(strata, path)
    assert read_sampled_qrels(path) == strata
    with pytest.raises(ValueError, match="2 strata"):
        write_sampled_qrels(strata, tmp_path / "t", format="trec")


def test_names_of_both_tools() -> None:
    assert [m.name for m in parse_sampled("iP") or []] == ["iP@10", "iP@50", "iP@1000"]
    assert parse_sampled("infAP") is None  # trec_eval's infAP, a family of the main registry
    assert [m.name for m in parse_sampled("infAP", script=True) or []] == ["xinfAP"]
    assert [m.name for m in parse_sampled("iprec@rec0.5") or []] == ["iprec@rec0.50"]
    assert parse_sampled("iprec_at_recall_0.50") is None  # trec_eval's IPrec@0.5
    assert parse_sampled("P@10") is None
    assert inferred_for(parse_measure("map")) == "xinfAP"
    assert inferred_for(parse_measure("P_20")) == "iP@20"
    assert inferred_for(parse_measure("R@10")) is None


TREC_EVAL = os.environ.get("TREC_EVAL")
ROBUST = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "robust03"


@pytest.mark.skipif(not TREC_EVAL, reason="set TREC_EVAL to a trec_eval 10.0 binary")
@pytest.mark.skipif(not ROBUST.exists(), reason="../shared/data/robust03 is absent")
def test_infap_on_a_real_uniform_sample_equals_trec_eval_per_query(tmp_path, capsys) -> None:
    """Robust 2003 topics 601-650, 30% of each topic's judged documents sampled by a hash (the
    rest -1), four real runs: our ``infAP`` per query is trec_eval 10.0's, printed the same."""
    lines = []
    for line in (ROBUST / "qrels.txt").read_text().splitlines():
        qid, _, docid, grade = line.split()
        if 601 <= int(qid) <= 650:
            kept = zlib.crc32(f"u{qid}{docid}".encode()) % 100 < 30
            lines.append(f"{qid} 0 {docid} {grade if kept else -1}\n")
    qrels = tmp_path / "sampled.qrels"
    qrels.write_text("".join(lines))
    for path in sorted((ROBUST / "runs").iterdir())[:4]:
        run = tmp_path / path.stem
        run.write_bytes(gzip.decompress(path.read_bytes()))
        assert TREC_EVAL is not None
        want = subprocess.run(
            [TREC_EVAL, "-q", "-m", "infAP", str(qrels), str(run)],
            capture_output=True,
            check=True,
            text=True,
            timeout=60,
        ).stdout
        code, got, _ = _run(
            ["evaluate", "--compat", "trec_eval", "-q", "-m", "infAP", str(qrels), str(run)],
            capsys,
        )
        assert code == 0 and got == want, path.name


def test_statap_from_sampled_qrels_and_from_prels_agree(toy, capsys, tmp_path) -> None:
    """statAP reads each document's inclusion probability: on sampled qrels its stratum's
    sampled share; written as a prels file and read with -R prels, the same figures."""
    from metrics.evaluation.sampled import prels_of
    from metrics.io.prels import write_prels

    q, r = toy
    prels = prels_of(read_sampled_qrels(q))
    assert prels.topics["1"]["c"].grade is None  # unsampled stays unknown
    assert prels.topics["1"]["d"].pi == pytest.approx(2 / 3)  # 2 of stratum 2's 3 sampled
    path = tmp_path / "toy.prels"
    with path.open("w") as f:
        write_prels(prels, f)
    code, out, err = _run(["evaluate", q, r, "-m", "statAP", "-q"], capsys)
    assert code == 0
    code2, out2, err2 = _run(["evaluate", "-R", "prels", str(path), r, "-q"], capsys)
    assert code2 == 0 and out2 == out
    assert "statMAP" in err2 and "lower bound on the uncertainty" in err2
    code, _, err = _run(["evaluate", str(path), r], capsys)  # five fields, not sample_eval's
    assert code == 2 and "-R prels" in err
    code, _, err = _run(["evaluate", "-R", "prels", str(path), r, "-m", "P@10"], capsys)
    assert code == 4 and "statAP" in err
