"""How far an automatic assigner's labels of answer items can be trusted (issue 34, point 6): its
agreement with people on the items both labelled (kappa, confusion, overall and per topic: a
judge that agrees at run level can still disagree topic by topic, arXiv 2504.15068), and how it
ranks the answer runs against people's labels (Kendall's tau-b, tau_AP, tau among the top 10),
per measure; and, where the judge's labels were suggested to the assessors, the anchoring
control (agreement in the shown arm and in the hidden arm). People's labels are the consensus
of the items' judgments; the ranking comparison needs every item judged by people (a partial
judging would rank runs by a lower bound), and says so when it is not.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from judging.assessments.models import Judgment
from judging.autojudge.answer_samples import _auto, _bank, _items
from judging.autojudge.models import Judge
from judging.autojudge.suggestions import anchoring_report
from judging.evaluation.answer_board import consensus_labels
from metrics.judges.audit import label_agreement, ranking_agreement

SCALE = [0, 1, 2]


def answer_audit(*, judge: Judge, kind: str, bank: int | None = None) -> dict[str, Any]:
    """The judge's agreement with people on ``kind`` items (``bank``: the published version of
    the nuggets assigned), overall and per topic, and the runs' rankings under its labels and
    under people's, per measure (``rankings`` empty, with ``rankings_note``, until people have
    judged every item)."""
    found = _bank(judge, kind, bank)
    items, keys = _items(judge, kind, found)
    campaign = judge.campaign
    qids = dict(campaign.topics.values_list("pk", "qid"))
    people = {(qids[t], k): g for (t, k), g in consensus_labels(campaign, kind).items()}
    auto = {key: grade for key, (grade, _) in _auto(judge, kind).items()}
    wanted = {(it.topic_id, k) for it, k in zip(items.items, keys, strict=True)}
    human = {key: g for key, g in people.items() if key in wanted}
    machine = {key: g for key, g in auto.items() if key in wanted}
    by_topic: dict[str, tuple[dict[Any, int], dict[Any, int]]] = defaultdict(lambda: ({}, {}))
    for key, g in human.items():
        by_topic[key[0]][0][key] = g
    for key, g in machine.items():
        by_topic[key[0]][1][key] = g
    topics = {q: label_agreement(h, a, SCALE).to_dict() for q, (h, a) in sorted(by_topic.items())}
    out: dict[str, Any] = {
        "judge": f"{judge.name} v{judge.version}",
        "kind": kind,
        "bank": found.number if found is not None else None,
        "items": len(wanted),
        "judged_by_people": len(human),
        "labelled_by_judge": len(machine),
        "labels": label_agreement(human, machine, SCALE).to_dict(),
        "topics": topics,
        "rankings": {},
        "rankings_note": "",
        "anchoring": None,
    }
    if Judgment.objects.filter(campaign=campaign, kind=kind).exclude(suggestion_arm="").exists():
        # the anchoring control, as for documents: agreement where the judge's label was shown
        # before the assessor judged and where it stayed hidden until they had
        out["anchoring"] = anchoring_report(campaign, judge, kind)
    order = [(it.topic_id, k) for it, k in zip(items.items, keys, strict=True)]
    missing_people = sum(key not in human for key in order)
    missing_judge = sum(key not in machine for key in order)
    if missing_people or missing_judge:
        out["rankings_note"] = (
            f"undefined: {missing_people} of {len(order)} items have no label from people and "
            f"{missing_judge} none from the judge; the runs are ranked once both labelled all"
        )
        return out
    human_values = items.values(np.array([human[key] for key in order]))
    auto_values = items.values(np.array([machine[key] for key in order]))
    for j, measure in enumerate(items.measures):
        h = {r: float(human_values[i, j]) for i, r in enumerate(items.runs)}
        a = {r: float(auto_values[i, j]) for i, r in enumerate(items.runs)}
        h = {r: v for r, v in h.items() if v == v}  # NaN: the run's measure is undefined
        a = {r: v for r, v in a.items() if v == v}
        out["rankings"][measure] = ranking_agreement(h, a).to_dict()
    return out
