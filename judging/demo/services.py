"""Loading the demo campaign and the demo users (local use only)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from judging.campaigns.models import Campaign
from judging.campaigns.services import (
    campaign_create,
    documents_import,
    run_submit,
    topics_import,
)
from judging.core.roles import ANNOTATOR, RESEARCHER, grant
from judging.demo.data import build
from judging.pools.services import pool_request

DEMO_CAMPAIGN = "Demo: energy, climate and health news"
DEMO_POOL_DEPTH = 10


@dataclass(frozen=True)
class DemoUser:
    username: str
    password: str
    role: str


# Local demo credentials, printed by `make demo`. Never deploy them: `load_demo` refuses to run
# with DEBUG off unless forced.
DEMO_USERS = (
    DemoUser("admin", "admin-demo", "admin"),
    DemoUser("researcher", "researcher-demo", RESEARCHER),
    DemoUser("annotator", "annotator-demo", ANNOTATOR),
)


def demo_users_ensure() -> dict[str, AbstractBaseUser]:
    User = get_user_model()
    users: dict[str, AbstractBaseUser] = {}
    for spec in DEMO_USERS:
        user, _ = User.objects.get_or_create(username=spec.username)
        user.set_password(spec.password)
        if spec.role == "admin":
            user.is_staff = True
            user.is_superuser = True
        user.save()
        if spec.role != "admin":
            grant(user, spec.role)
        users[spec.role] = user
    return users


@transaction.atomic
def demo_load() -> Campaign | None:
    """Create the demo users, and the demo campaign if the database has no campaign yet.

    Returns the campaign when it was created, None when the database already had campaigns.
    """
    users = demo_users_ensure()
    if Campaign.objects.exists():
        return None
    demo = build()
    campaign = campaign_create(
        name=DEMO_CAMPAIGN,
        pool_depth=DEMO_POOL_DEPTH,
        description="A small generated newsroom collection: six topics, a few hundred "
        "documents and six runs. One run (novel-neural) is not pooled.",
        created_by=users["admin"],
    )
    topics = "\n".join(
        json.dumps(
            {
                "qid": t.qid,
                "title": t.title,
                "description": t.description,
                "narrative": t.narrative,
                "tags": list(t.tags),
            }
        )
        for t in demo.topics
    )
    topics_import(campaign=campaign, data=topics.encode(), fmt="jsonl", source="demo-topics")
    docs = "\n".join(
        json.dumps({"docid": d.docid, "title": d.title, "text": d.text}) for d in demo.documents
    )
    documents_import(campaign=campaign, data=docs.encode(), fmt="jsonl", source="demo-documents")
    for run in demo.runs:
        run_submit(
            campaign=campaign,
            owner=users[RESEARCHER],
            results=run.results,
            tag=run.tag,
            group=run.group,
            description=run.description,
            pooled=run.pooled,
        )
    # Pool version 1: depth-10 union of the pooled runs, built when this transaction commits
    # (inline with the embedded default, by a worker when a broker is configured).
    pool_request(
        campaign=campaign, strategy="depth", depth=DEMO_POOL_DEPTH, requested_by=users["admin"]
    )
    return campaign
