"""statAP from a Million Query ``prels`` file (``metrics.io.prels``, ``metrics.measures.statap``,
``metrics.pooling.statap_design``): a hand-worked toy, the figures of Pavlu's
``statAP_MQ_eval_v3.pl`` (run with Debian's perl 5.36 on the same files; the script is not in
this repository), and unbiasedness by simulation."""

from __future__ import annotations

import io
import math
import zlib
from pathlib import Path

import numpy as np
import pytest

from metrics import Run, read_run
from metrics.io.prels import Prels, PrelsDoc, read_prels, write_prels
from metrics.io.sampled import DocState
from metrics.measures.statap import statap, statap_ragged
from metrics.pooling.statap_design import ap_prior, draw, inclusion_probabilities, statap_design
from metrics.problems import InvalidInput

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "robust03"

# topic docid grade method pi
TOY_PRELS = b"""1 a 1 1 1
1 b 0 1 0.5
1 c 1 1 0.5
1 d -999 1 0.5
1 f 1 1 0.25
"""
TOY_RUN = b"""1 Q0 a 1 5.0 t
1 Q0 b 2 4.0 t
1 Q0 c 3 3.0 t
1 Q0 d 4 2.0 t
1 Q0 e 5 1.0 t
"""


def test_the_toy_gives_the_hand_worked_statap_and_variance() -> None:
    """R-hat = 1/1 + 1/0.5 + 1/0.25 = 7 (a, c, f; f not retrieved). a at rank 1: prec 1, term 1;
    c at rank 3: prec (1 + 1/1)/3 = 2/3, term (2/3)/0.5 = 4/3. statAP = (7/3)/7 = 1/3 (the
    script prints AP=0.333333). Variance: theta = 1/3; z_c = 2/3 - 1/3 + 0 = 1/3 with weight
    (1 - 0.5)/0.5^2 = 2; z_f = -1/3 with weight 0.75/0.0625 = 12; a has pi = 1 (weight 0):
    (2/9 + 12/9) / 49 = 2/63."""
    got = statap(read_prels(TOY_PRELS), read_run(TOY_RUN))
    topic = got.per_topic["1"]
    assert topic.ap == pytest.approx(1 / 3)
    assert topic.r_hat == 7.0
    assert topic.variance == pytest.approx(2 / 63)
    # the script's counts: sampled=4 sampled_relev=3 sampled_in_list=3 sampled_relev_in_list=2
    assert (topic.sampled, topic.sampled_relevant) == (4, 3)
    assert (topic.sampled_in_list, topic.sampled_relevant_in_list) == (3, 2)
    half = 1.959963984540054 * math.sqrt(2 / 63)
    assert got.interval == pytest.approx((1 / 3 - half, 1 / 3 + half))


def test_the_toy_gives_the_hand_worked_bias_correction() -> None:
    """Estimated bias -(1/R-hat^2) sum (w^2 - w) z = -(2 (1/3) + 12 (-1/3)) / 49 = 10/147, so
    the corrected statAP is 1/3 - 10/147 = 13/49."""
    got = statap(read_prels(TOY_PRELS), read_run(TOY_RUN), correct_bias=True)
    assert got.per_topic["1"].ap == pytest.approx(13 / 49)
    assert got.per_topic["1"].variance == pytest.approx(2 / 63)


def test_a_prels_keeps_three_states_apart() -> None:
    prels = read_prels(TOY_PRELS + b"1 g 2 0 NA\n1 h 2 2 0.1\n1 i -1 1 0.3\n")
    assert prels.state("1", "a") is DocState.JUDGED
    assert prels.state("1", "d") is DocState.UNSAMPLED
    assert prels.state("1", "i") is DocState.UNSAMPLED  # sample_eval's -1
    assert prels.state("1", "g") is DocState.UNSAMPLED  # judged outside the sample (NA)
    assert prels.state("1", "e") is DocState.NOT_POOLED
    assert prels.state("2", "a") is DocState.NOT_POOLED
    sample = prels.sample("1")
    assert "d" not in sample and "g" not in sample
    assert sample["h"] == (1.0, 2)  # MTC picked it too: the script reads pi = 1


def test_the_reader_names_every_bad_line() -> None:
    bad = b"1 a 1 1 0.5\n1 b 1 1\n1 c x 1 0.5\n1 d 1 1 1.5\n1 e 1 1 0\n1 a 0 1 0.5\n1 f -2 1 .5\n"
    with pytest.raises(InvalidInput) as err:
        read_prels(bad, source="p.txt")
    assert [p.line for p in err.value.problems] == [2, 3, 4, 5, 6, 7]
    assert str(err.value).startswith("p.txt line 2: expected 5 fields")


def test_write_then_read_gives_the_same_prels() -> None:
    prels = Prels(
        {"7": {"x": PrelsDoc(0.125, 1), "y": PrelsDoc(0.3, None), "z": PrelsDoc(None, 0)}}
    )
    out = io.StringIO()
    write_prels(prels, out)
    assert out.getvalue() == "7 x 1 1 0.125\n7 y -999 1 0.3\n7 z 0 1 NA\n"
    assert read_prels(out.getvalue().encode()) == prels


def _crc(text: str) -> int:
    return zlib.crc32(text.encode())


def robust_prels() -> bytes:
    """Robust 2003's qrels of topics 601-650 as a prels file: pi 1, 0.5 or 0.2 by one hash, the
    document kept (judged) when another hash falls below pi, else grade -999."""
    rate = (1.0, 0.5, 0.2)
    out = []
    for line in (DATA / "qrels.txt").read_text().splitlines():
        qid, _, docid, grade = line.split()
        if 601 <= int(qid) <= 650:
            pi = rate[_crc(f"s{qid}{docid}") % 3]
            kept = _crc(f"k{qid}{docid}") % 100 < 100 * pi
            out.append(f"{qid} {docid} {grade if kept else -999} 1 {pi}\n")
    return "".join(out).encode()


def tie_free(run: Run) -> Run:
    """The run with scores n, n-1, ... in our order, so Perl's sort (which breaks ties as its
    hash order falls) ranks it the same way."""
    return Run.from_dict(
        {q: {d: float(1000 - i) for i, d in enumerate(run.ranking(q))} for q in run.qids}
    )


# statAP_MQ_eval_v3.pl -q robust_prels() tie_free(run): statMAP_on_valid_topics, AP per topic
SCRIPT = {
    "InexpC2": (0.320777717920954, {"601": 0.108757, "602": 0.544376, "650": 0.053457}),
    "aplrob03a": (0.408149129531245, {"601": 0.095334, "602": 0.350269, "650": 0.201681}),
    "UIUC03Rd1": (0.358030404509986, {"601": 0.160204, "602": 0.464056, "650": 0.035077}),
}
# the same run's Relevant, sampled, sampled_relev, sampled_in_list, sampled_relev_in_list
SCRIPT_COUNTS = {"601": (3.0, 555, 3, 265, 3), "650": (34.0, 471, 19, 266, 15)}


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data (Robust 2003) is absent")
@pytest.mark.parametrize("tag", sorted(SCRIPT))
def test_a_sampled_robust_2003_gives_the_scripts_statap(tag: str) -> None:
    prels = read_prels(robust_prels())
    got = statap(prels, tie_free(read_run(DATA / "runs" / f"input.{tag}.gz")))
    statmap, topics = SCRIPT[tag]
    assert len(got.per_topic) == 50 and not got.excluded
    assert got.mean == pytest.approx(statmap, abs=1e-12)
    for qid, ap in topics.items():
        assert f"{got.per_topic[qid].ap:.6f}" == f"{ap:.6f}"
    if tag == "UIUC03Rd1":
        for qid, (r_hat, *counts) in SCRIPT_COUNTS.items():
            t = got.per_topic[qid]
            assert t.r_hat == r_hat
            assert [
                t.sampled,
                t.sampled_relevant,
                t.sampled_in_list,
                t.sampled_relevant_in_list,
            ] == counts


def test_statap_is_unbiased_for_aps_numerator_and_denominator() -> None:
    """A pool of 300 documents (45 relevant), three runs ranking it; AP-prior Poisson samples of
    an expected 20%. Over 20,000 draws the mean numerator and R-hat match AP x R and R within 4
    standard errors (they are unbiased); the ratio is not: with some 12 relevant documents sampled
    its mean is 0.562 against AP 0.587, a bias of an eighth of its standard deviation (0.197),
    which the test bounds at 0.15 of it; subtracting the estimated bias leaves -0.0027. The
    mean estimated variance (0.036) is within 20% of the variance of statAP over the draws
    (0.039). One topic's normal interval is too short at such a sample (84% coverage here)."""
    rng = np.random.default_rng(3)
    n = 300
    rel = rng.random(n) < 0.15
    runs = {f"r{k}": list(np.argsort(-(rel * 1.5 + rng.normal(size=n)))) for k in range(3)}
    weights = ap_prior({k: [str(d) for d in v] for k, v in runs.items()}, depth=n)
    pi = inclusion_probabilities([weights[str(d)] for d in range(n)], 0.2 * n)
    assert pi.sum() == pytest.approx(0.2 * n)
    ranking = np.array(runs["r0"])
    rank = np.flatnonzero(rel[ranking]) + 1  # ranks of the relevant documents
    docs = ranking[rank - 1]
    r_true = int(rel.sum())
    ap_true = float(np.sum(np.arange(1, rank.size + 1) / rank)) / r_true
    reps = 20000
    x = rng.random((reps, n)) < pi
    w_all = np.where(x & rel, 1.0 / pi, 0.0)
    r_hat = w_all.sum(axis=1)
    q = (w_all * w_all - w_all).sum(axis=1)
    ap, var, bias = statap_ragged(
        rank, np.array([0, rank.size]), w_all[:, docs], r_hat[:, None], q[:, None]
    )
    ap, var, corrected = ap[:, 0], var[:, 0], ap[:, 0] - bias[:, 0]
    num = ap * r_hat
    assert abs(num.mean() - ap_true * r_true) < 4 * num.std() / math.sqrt(reps)
    assert abs(r_hat.mean() - r_true) < 4 * r_hat.std() / math.sqrt(reps)
    assert abs(ap.mean() - ap_true) < 0.15 * ap.std()
    assert abs(corrected.mean() - ap_true) < 0.2 * abs(ap.mean() - ap_true)  # 0.0027 here
    assert var.mean() == pytest.approx(ap.var(), rel=0.2)


def test_the_design_judges_the_expected_share_with_the_top_documents_certain() -> None:
    runs = {"a": [f"d{i}" for i in range(100)], "b": [f"d{i}" for i in range(50, 150)]}
    prior = ap_prior(runs, depth=100)
    assert sum(prior.values()) == pytest.approx(1.0)
    design = statap_design({"9": runs}, share=0.2)
    probs = design["9"]
    assert len(probs) == 150 and sum(probs.values()) == pytest.approx(30.0)
    assert probs["d50"] > probs["d0"] > probs["d99"] > 0  # d50: rank 1 in b, 51 in a
    capped = inclusion_probabilities([10.0, 1.0, 1.0, 1.0, 1.0, 0.0], 2.0)
    assert capped.tolist() == [1.0, 0.25, 0.25, 0.25, 0.25, 0.0]
    prels = draw(design, lambda q, d: int(d in {"d0", "d7"}), seed=1)
    states = {prels.state("9", d) for d in probs}
    assert states == {DocState.JUDGED, DocState.UNSAMPLED}
    assert prels.state("9", "d500") is DocState.NOT_POOLED
    assert set(prels.sample("9")) == {
        d for d, doc in prels.topics["9"].items() if doc.grade is not None
    }


def test_a_topic_without_a_sampled_relevant_document_leaves_the_others_alone() -> None:
    """Segments are computed together by cumulative sums: a first segment with R-hat 0 (NaN)
    must not spill into the second, which gives the toy's 1/3 and 2/63."""
    rank = np.array([4, 1, 3])
    starts = np.array([0, 1, 3])
    w = np.array([0.0, 1.0, 2.0])
    ap, var, _ = statap_ragged(rank, starts, w, np.array([0.0, 7.0]), np.array([0.0, 2.0 + 12.0]))
    assert math.isnan(ap[0]) and math.isnan(var[0])
    assert ap[1] == pytest.approx(1 / 3) and var[1] == pytest.approx(2 / 63)


def test_two_sampled_neighbours_give_the_hand_worked_pairwise_variance() -> None:
    """Relevant x and y at ranks 1 and 2, both sampled with pi = 0.5 (w = 2): R-hat 4,
    prec 1 and (1 + 2)/2, numerator 2 + 3 = 5, statAP 5/4. z_x = 1 + 2/2 - 5/4 = 3/4 (the tail
    counts y), z_y = 1/4; linear part 2 (9/16 + 1/16) = 5/4; pairwise term 2 x 2 / 2^2 = 1;
    variance (5/4 + 1)/16 = 9/64. Bias -(2 (3/4) + 2 (1/4))/16 = -1/8."""
    ap, var, bias = statap_ragged(
        np.array([1, 2]), np.array([0, 2]), np.array([2.0, 2.0]), np.array([4.0]), np.array([4.0])
    )
    assert ap[0] == 1.25 and var[0] == pytest.approx(9 / 64) and bias[0] == pytest.approx(-1 / 8)
