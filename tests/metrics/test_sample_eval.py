"""NIST's ``sample_eval.pl`` figures reproduced (``metrics.measures.sample_eval``): a hand-made
case and a sampled Robust 2003 (topics 601-650, three strata sampled at 100%, 50% and 20%),
three real runs. The expected figures were printed by ``sample_eval.pl -q`` (NIST's script, run
with Debian's perl 5.36) on the same files; the script is not in this repository."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest

from metrics import read_run
from metrics.io.sampled import DocState, read_sampled_qrels
from metrics.measures.sample_eval import sample_eval
from metrics.problems import InvalidInput

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "robust03"

TOY_QRELS = b"""1 0 a 1 1
1 0 b 1 0
1 0 c 2 -1
1 0 d 2 2
1 0 e 2 0
2 0 f 1 1
2 0 g 2 -1
2 0 h 2 1
"""
TOY_RUN = b"""1 Q0 a 1 5.0 t
1 Q0 x 2 4.0 t
1 Q0 c 3 3.0 t
1 Q0 d 4 2.0 t
1 Q0 b 5 1.0 t
2 Q0 g 1 3.0 t
2 Q0 f 2 2.0 t
2 Q0 h 3 1.0 t
"""
# sample_eval.pl -q toy_qrels toy_run
TOY = {
    "1": {
        "infAP": 0.7500,
        "infNDCG": 0.7238,
        "iP10": 0.3000,
        "inum_rel_ret": 3.0000,
        "inum_rel": 2.5000,
        "num_ret": 5,
    },
    "2": {
        "infAP": 0.7407,
        "infNDCG": 0.7654,
        "iP10": 0.3000,
        "inum_rel_ret": 2.9999,
        "inum_rel": 3.0000,
        "num_ret": 3,
    },
    "all": {
        "infAP": 0.7454,
        "infNDCG": 0.7446,
        "iprec@rec0.90": 0.8750,
        "iprec@rec1.00": 0.3750,
        "iP10": 0.3000,
        "iP50": 0.0600,
        "iP1000": 0.0030,
        "inum_rel_ret": 5.9999,
        "inum_rel": 5.5000,
        "num_ret": 8,
    },
}


def test_the_hand_made_case_gives_the_scripts_figures() -> None:
    qrels = read_sampled_qrels(TOY_QRELS)
    assert qrels.state("1", "c") is DocState.UNSAMPLED
    assert qrels.state("1", "d") is DocState.JUDGED
    assert qrels.state("1", "x") is DocState.NOT_POOLED
    assert qrels.judged("1") == {"a": 1, "b": 0, "d": 2, "e": 0}  # never c
    got = sample_eval(qrels, read_run(TOY_RUN))
    for qid in ("1", "2"):
        for name, want in TOY[qid].items():
            assert got.per_topic[qid][name] == pytest.approx(want, abs=5e-5), (qid, name)
    for name, want in TOY["all"].items():
        assert got.all[name] == pytest.approx(want, abs=5e-5), name


def test_bad_lines_are_named() -> None:
    with pytest.raises(InvalidInput) as err:
        read_sampled_qrels(b"1 0 a 1 1\n1 0 a 2 0\n1 0 b 1\n1 0 c 1 x\n1 0 d 1 -2\n")
    problems = [str(p) for p in err.value.problems]
    assert problems == [
        "line 2: document a of topic 1 is listed twice",
        "line 3: expected 5 fields (topic iteration docid stratum grade), got 4",
        "line 4: grade 'x' is not an integer",
        "line 5: grade -2 is below -1 (-1: pooled, not sampled)",
    ]


def _hash(text: str) -> int:
    return zlib.crc32(text.encode())


def sampled_lines() -> list[str]:
    """Robust 2003's qrels of topics 601-650 as a sampled pool: each document's stratum by a
    hash (1, 2 or 3), then sampled at 100%, 50% or 20% by another (unsampled: -1)."""
    rate = {"1": 100, "2": 50, "3": 20}
    out = []
    for line in (DATA / "qrels.txt").read_text().splitlines():
        qid, _, docid, grade = line.split()
        if not 601 <= int(qid) <= 650:
            continue
        stratum = str(1 + _hash(f"s{qid}{docid}") % 3)
        kept = _hash(f"k{qid}{docid}") % 100 < rate[stratum]
        out.append(f"{qid} 0 {docid} {stratum} {grade if kept else -1}\n")
    return out


# sample_eval.pl -q on sampled_lines() and each run: the "all" lines and topics 601, 650
ROBUST = {
    "InexpC2": {
        "601": {
            "infAP": 0.1629,
            "infNDCG": 0.3585,
            "iP10": 0.1667,
            "iP50": 0.04,
            "iP1000": 0.003,
            "inum_rel_ret": 3.0001,
            "inum_rel": 3.0,
            "num_ret": 1000.0,
        },
        "650": {
            "infAP": 0.0588,
            "infNDCG": 0.339,
            "iP10": 0.0,
            "iP50": 0.1467,
            "iP1000": 0.0246,
            "inum_rel_ret": 24.6364,
            "inum_rel": 36.2347,
            "num_ret": 1000.0,
        },
        "all": {
            "infAP": 0.3142,
            "infNDCG": 0.6078,
            "iprec@rec0.00": 0.7185,
            "iprec@rec0.10": 0.6156,
            "iprec@rec0.20": 0.5099,
            "iprec@rec0.30": 0.4316,
            "iprec@rec0.40": 0.3766,
            "iprec@rec0.50": 0.3062,
            "iprec@rec0.60": 0.2305,
            "iprec@rec0.70": 0.1753,
            "iprec@rec0.80": 0.1127,
            "iprec@rec0.90": 0.0732,
            "iprec@rec1.00": 0.0196,
            "iP10": 0.4604,
            "iP50": 0.2385,
            "iP1000": 0.0273,
            "inum_rel_ret": 1364.6187,
            "inum_rel": 1670.1873,
            "num_ret": 50000.0,
        },
    },
    "MU03rob01": {
        "601": {
            "infAP": 0.0367,
            "infNDCG": 0.2525,
            "iP10": 0.1333,
            "iP50": 0.04,
            "iP1000": 0.003,
            "inum_rel_ret": 3.0001,
            "inum_rel": 3.0,
            "num_ret": 1000.0,
        },
        "650": {
            "infAP": 0.0081,
            "infNDCG": 0.1622,
            "iP10": 0.0,
            "iP50": 0.04,
            "iP1000": 0.0127,
            "inum_rel_ret": 12.6667,
            "inum_rel": 36.2347,
            "num_ret": 1000.0,
        },
        "all": {
            "infAP": 0.2602,
            "infNDCG": 0.5591,
            "iprec@rec0.00": 0.7231,
            "iprec@rec0.10": 0.5564,
            "iprec@rec0.20": 0.4282,
            "iprec@rec0.30": 0.347,
            "iprec@rec0.40": 0.2889,
            "iprec@rec0.50": 0.2444,
            "iprec@rec0.60": 0.1786,
            "iprec@rec0.70": 0.1219,
            "iprec@rec0.80": 0.0854,
            "iprec@rec0.90": 0.0468,
            "iprec@rec1.00": 0.0135,
            "iP10": 0.4232,
            "iP50": 0.2007,
            "iP1000": 0.0249,
            "inum_rel_ret": 1243.4966,
            "inum_rel": 1670.1873,
            "num_ret": 50000.0,
        },
    },
    "NLPR03vb10": {
        "601": {
            "infAP": 0.3333,
            "infNDCG": 0.5317,
            "iP10": 0.2,
            "iP50": 0.04,
            "iP1000": 0.002,
            "inum_rel_ret": 2.0,
            "inum_rel": 3.0,
            "num_ret": 10.0,
        },
        "650": {
            "infAP": 0.0,
            "infNDCG": 0.0,
            "iP10": 0.0333,
            "iP50": 0.0067,
            "iP1000": 0.0003,
            "inum_rel_ret": 0.3334,
            "inum_rel": 36.2347,
            "num_ret": 10.0,
        },
        "all": {
            "infAP": 0.1607,
            "infNDCG": 0.2311,
            "iprec@rec0.00": 0.6871,
            "iprec@rec0.10": 0.5251,
            "iprec@rec0.20": 0.3088,
            "iprec@rec0.30": 0.1322,
            "iprec@rec0.40": 0.1118,
            "iprec@rec0.50": 0.0779,
            "iprec@rec0.60": 0.0385,
            "iprec@rec0.70": 0.0217,
            "iprec@rec0.80": 0.0217,
            "iprec@rec0.90": 0.0183,
            "iprec@rec1.00": 0.0,
            "iP10": 0.4533,
            "iP50": 0.0911,
            "iP1000": 0.0046,
            "inum_rel_ret": 227.6657,
            "inum_rel": 1670.1873,
            "num_ret": 504.0,
        },
    },
}


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data (Robust 2003) is absent")
@pytest.mark.parametrize("tag", sorted(ROBUST))
def test_a_sampled_robust_2003_gives_the_scripts_figures(tag: str) -> None:
    qrels = read_sampled_qrels("".join(sampled_lines()).encode())
    with gzip.open(DATA / "runs" / f"input.{tag}.gz") as f:
        run = read_run(f.read())
    got = sample_eval(qrels, run)
    for topic, want in ROBUST[tag].items():
        have = got.all if topic == "all" else got.per_topic[topic]
        for name, value in want.items():
            assert f"{have[name]:.4f}" == f"{value:.4f}", (topic, name)
    counts = qrels.counts("601")
    assert set(counts) == {"1", "2", "3"}
    assert all(k <= n for n, k in counts.values())
