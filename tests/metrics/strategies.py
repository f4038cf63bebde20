"""Hypothesis strategies shared by the metrics tests."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from metrics import Qrels, Run


@st.composite
def collections(
    draw: st.DrawFn,
    docs: Sequence[str] = tuple(f"d{i}" for i in range(12)),
    max_grade: int = 2,
    max_runs: int = 5,
) -> tuple[Qrels, dict[str, Run]]:
    """Qrels of 1-3 topics (grades -1..``max_grade``, -1 = pooled but unjudged) and 2 to
    ``max_runs`` runs over them with tied integer scores; every run answers at least one topic."""
    topics = ["1", "2", "3"][: draw(st.integers(1, 3))]
    qrels: dict[str, dict[str, int]] = {}
    for q in topics:
        judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=10))
        qrels[q] = {d: draw(st.integers(-1, max_grade)) for d in judged}
    runs: dict[str, Run] = {}
    for r in range(draw(st.integers(2, max_runs))):
        ranking: dict[str, dict[str, float]] = {}
        for q in topics:
            if draw(st.booleans()) or not ranking:
                ids = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=8))
                scores = draw(st.lists(st.integers(0, 3), min_size=len(ids), max_size=len(ids)))
                ranking[q] = {d: float(s) for d, s in zip(ids, scores, strict=True)}
        runs[f"r{r}"] = Run.from_dict(ranking, tag=f"r{r}")
    return Qrels.from_dict(qrels), runs
