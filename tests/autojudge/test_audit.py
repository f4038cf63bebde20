"""The judge audit as a stored task: label agreement on the pool documents both graded, the runs
ranked under the judge's labels vs people's, the family gap with the circularity flag, and the
two robustness probes run through the judge itself."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from django.test import Client

from judging.autojudge import services
from judging.autojudge.audit import audit_request
from judging.autojudge.models import JudgeKind
from judging.campaigns.models import Campaign, Run
from judging.core.errors import InvalidInput
from judging.pools.models import PoolVersion
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from tests.test_judging_api import THREE_TOPICS, build_pool

pytestmark = pytest.mark.django_db

# people: d*-1 highly relevant, d*-2 relevant, the rest not; the judge agrees except that it
# calls d*-3 relevant (a false positive per topic) and d403-2 not relevant
HUMAN = {
    (q, d): (2 if d.endswith("-1") else 1 if d.endswith("-2") else 0)
    for q, ds in THREE_TOPICS.items()
    for d in ds
}
AUTO = {**HUMAN, **{(q, f"d{q}-3"): 1 for q in THREE_TOPICS}, ("403", "d403-2"): 0}


@pytest.fixture
def setup(campaign: Campaign, researcher: Any, as_committed: Any) -> dict[str, Any]:
    build_pool(campaign, researcher, THREE_TOPICS)
    # a third run, built on gpt-4o, puts the judge's false positives first
    results = {
        q: {d: float(10 - i) for i, d in enumerate([ds[2], ds[0], ds[1], ds[3]])}
        for q, ds in THREE_TOPICS.items()
    }
    run_submitted(
        campaign=campaign,
        owner=researcher,
        tag="llm-rag",
        results=results,
        pooled=False,
        model_names=["gpt-4o-2024-08-06"],
    )
    qrels = "".join(f"{q} 0 {d} {g}\n" for (q, d), g in HUMAN.items())
    with as_committed():
        human = qrels_imported(campaign=campaign, data=qrels.encode())
    judge = services.judge_create(
        campaign=campaign, name="file", kind=JudgeKind.IMPORTED, model="gpt-4o"
    )
    services.store_labels(judge, [services.Label(q, d, g) for (q, d), g in AUTO.items()])
    return {"human": human, "judge": judge, "pool": PoolVersion.objects.get(campaign=campaign)}


def test_the_audit_measures_agreement_rankings_and_the_circular_family(
    setup: dict[str, Any], as_committed: Any
) -> None:
    with as_committed():
        audit = audit_request(judge=setup["judge"], human=setup["human"], pool=setup["pool"])
    audit.refresh_from_db()
    assert audit.state == "done", audit.error
    r = audit.result
    a = r["agreement"]
    assert a["n"] == 12
    # confusion rows human 0/1/2, columns judge 0/1/2: 0->1 three times (d*-3), 1->0 once
    assert a["confusion"] == [[3, 3, 0], [1, 2, 0], [0, 0, 3]]
    assert a["exact"] == pytest.approx(8 / 12)
    assert a["within_one"] == pytest.approx(1.0)
    assert r["probes"] == {"available": False, "reason": "an imported judge cannot be asked again"}
    ranking = r["rankings"]["P@10"]
    assert ranking["n_runs"] == 3
    gaps = {g["family"]: g for g in r["family_gaps"]["P@10"]}
    circular = [g for g in gaps.values() if g["circular"]]
    assert len(circular) == 1 and circular[0]["runs"] == ["llm-rag"]
    # under the judge's labels the LLM run gains (its first document is a false positive)
    human_p = r["scores"]["human"]["P@10"]["llm-rag"]
    auto_p = r["scores"]["automatic"]["P@10"]["llm-rag"]
    assert circular[0]["mean_gap"] == pytest.approx(auto_p - human_p)
    assert auto_p > human_p


def test_an_audit_needs_human_qrels_of_the_same_campaign(setup: dict[str, Any]) -> None:
    automatic = services.automatic_qrels(judge=setup["judge"], pool=setup["pool"])
    with pytest.raises(InvalidInput, match="not human"):
        audit_request(judge=setup["judge"], human=automatic, pool=setup["pool"])


class Gullible:
    """A judge that obeys instructions: highly relevant when the passage says so, else not
    relevant (query words do not move it)."""

    def __init__(self, judge: Any) -> None:
        self.judge = judge

    def label(self, pairs: Sequence[tuple[str, str]]) -> Iterator[services.Label]:
        raise AssertionError("the probes send texts, not pairs")

    def label_texts(self, items: Sequence[Any]) -> Iterator[services.Label]:
        for (q, d), _query, passage in items:
            grade = 2 if "highly relevant" in passage else 0
            yield services.Label(q, d, grade)


def test_the_probes_ask_the_judge_again_with_altered_texts(
    setup: dict[str, Any], as_committed: Any, monkeypatch: pytest.MonkeyPatch, campaign: Campaign
) -> None:
    monkeypatch.setitem(services._LABELLERS, JudgeKind.EMBEDDING, Gullible)
    judge = services.judge_create(
        campaign=campaign,
        name="gullible",
        kind=JudgeKind.EMBEDDING,
        model="m",
        params={"thresholds": [0.3, 0.6]},
    )
    services.store_labels(judge, [services.Label(q, d, g) for (q, d), g in AUTO.items()])
    with as_committed():
        audit = audit_request(judge=judge, human=setup["human"], pool=setup["pool"])
    audit.refresh_from_db()
    probes = audit.result["probes"]
    assert probes["available"] and probes["items"] == 6  # the six human-non-relevant documents
    assert probes["injection"]["flipped"] == 6 and probes["injection"]["share"] == 1.0
    assert probes["stuffing"]["flipped"] == 0
    assert Run.objects.filter(tag="llm-rag").exists()


def test_the_audit_reports_anchoring_when_suggestions_were_recorded(
    setup: dict[str, Any], as_committed: Any, annotator: Any, campaign: Campaign
) -> None:
    from judging.assessments.models import Judgment

    topics = {t.qid: t for t in campaign.topics.all()}
    # shown arm: the assessor agrees with the judge on all four; hidden: on one of four
    rows = [
        ("401", "d401-1", 2, "shown"),
        ("401", "d401-2", 1, "shown"),
        ("402", "d402-1", 2, "shown"),
        ("402", "d402-3", 1, "shown"),
        ("403", "d403-1", 0, "hidden"),
        ("403", "d403-2", 0, "hidden"),
        ("403", "d403-3", 0, "hidden"),
        ("402", "d402-4", 2, "hidden"),
    ]
    for q, d, grade, arm in rows:
        Judgment.objects.create(
            campaign=campaign,
            topic=topics[q],
            docid=d,
            annotator=annotator,
            grade=grade,
            suggestion_arm=arm,
            suggested_grade=AUTO[(q, d)],
        )
    with as_committed():
        audit = audit_request(judge=setup["judge"], human=setup["human"], pool=setup["pool"])
    audit.refresh_from_db()
    anchoring = audit.result["anchoring"]
    assert anchoring["shown"]["n"] == 4 and anchoring["shown"]["exact"] == 1.0
    assert anchoring["hidden"]["n"] == 4 and anchoring["hidden"]["exact"] == pytest.approx(0.25)
    assert anchoring["difference"]["exact"] == pytest.approx(0.75)


# --- the audit page opens on the latest computed audit (issue 29, point 14) ---------------


def _audit_page(user: Any, campaign: Campaign, judge: Any, query: str = "") -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/campaigns/{campaign.pk}/judges/{judge.pk}/audit/{query}")
    assert response.status_code == 200
    return str(response.content.decode())


def _selected(html: str, name: str) -> str:
    select = re.search(rf'<select name="{name}">(.*?)</select>', html, re.S)
    assert select is not None
    chosen = re.findall(r'<option value="([^"]+)" selected>', select.group(1))
    assert len(chosen) == 1, chosen
    return chosen[0]


def test_the_page_opens_on_the_latest_computed_audit_not_on_the_newest_versions(
    setup: dict[str, Any], campaign: Campaign, researcher: Any, as_committed: Any
) -> None:
    with as_committed():
        audit_request(judge=setup["judge"], human=setup["human"], pool=setup["pool"])
    # a newer human qrels version, never audited: the page used to open on it, with no audit
    qrels = "".join(f"{q} 0 {d} {g}\n" for (q, d), g in HUMAN.items()) + "401 0 extra 1\n"
    with as_committed():
        newer = qrels_imported(campaign=campaign, data=qrels.encode())
    assert newer.number > setup["human"].number
    html = _audit_page(researcher, campaign, setup["judge"])
    assert _selected(html, "qrels") == str(setup["human"].number)
    assert _selected(html, "pool") == str(setup["pool"].number)
    assert 'id="audit-basis"' in html and 'id="audit-missing"' not in html
    assert 'id="audit-latest"' in html  # and it says that newer versions have none
    # asked for explicitly, the newer version is shown, without its audit
    html = _audit_page(researcher, campaign, setup["judge"], f"?qrels={newer.number}")
    assert _selected(html, "qrels") == str(newer.number)
    assert 'id="audit-missing"' in html and 'id="audit-basis"' not in html


def test_without_any_audit_the_page_says_so_and_offers_to_compute_one_to_who_may(
    setup: dict[str, Any], campaign: Campaign, researcher: Any, admin_user: Any
) -> None:
    html = _audit_page(admin_user, campaign, setup["judge"])
    assert 'id="audit-missing"' in html and "No audit of" in html
    assert 'id="audit-compute"' in html
    # a researcher reads audits and may not ask for one (its probes call the judge again): told
    # who can, with no button that would be refused
    html = _audit_page(researcher, campaign, setup["judge"])
    assert 'id="audit-missing"' in html and 'id="audit-compute"' not in html
    assert 'id="audit-ask-admin"' in html
