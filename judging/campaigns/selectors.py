"""Reads of campaigns and runs that the API and the pages share, scoped to who is asking."""

from __future__ import annotations

from django.db.models import QuerySet

from judging.campaigns.models import Campaign, Document, Run
from judging.core.roles import UserLike, is_admin, is_researcher


def campaign_list(*, user: UserLike) -> QuerySet[Campaign]:
    """The campaigns the user may see, with their topic, document and run counts; annotators
    are blind to systems, so their run count is None (not even how many runs exist)."""
    return Campaign.objects.visible_to(user).with_counts(runs=is_researcher(user))


def campaign_documents(
    *, campaign: Campaign, docids: list[str] | None = None, text: bool = False
) -> QuerySet[Document]:
    """The campaign's documents in docid order (only ``docids`` when given), without their text
    unless ``text``: a list of documents need not read megabytes of text it does not show."""
    docs = campaign.documents.order_by("docid")
    if docids:
        docs = docs.filter(docid__in=docids)
    return docs if text else docs.defer("text")


def run_label(run: Run, user: UserLike) -> str:
    """Admins see a run by its tag (unique in the campaign), its submitter by the name they gave
    it, everyone else anonymised."""
    if is_admin(user):
        return run.tag
    if run.owner_id == getattr(user, "pk", None):
        return run.name
    return f"anonymous run #{run.pk}"


def sees_run(run: Run, user: UserLike) -> bool:
    """Whether the user may see the run by name (and its id and group): admins and its owner."""
    return is_admin(user) or run.owner_id == getattr(user, "pk", None)


def run_labels(campaign: Campaign, user: UserLike) -> dict[str, str]:
    """Run tag -> what the user may see of it, for every run of the campaign."""
    # only what the label reads: a run's other fields are large, and 80 runs cost 10 ms
    runs = campaign.runs.only("pk", "campaign", "tag", "name", "owner")
    return {run.tag: run_label(run, user) for run in runs}


def visible_run_tags(campaign_id: int, tags: list[str], user: UserLike) -> list[str]:
    """``tags`` (runs of one campaign) as the user may see them, in the same order: admins every
    tag, researchers their own runs' tags and the others anonymised (so the count is kept),
    everyone else nothing. A tag whose run is gone is anonymised too."""
    if is_admin(user):
        return list(tags)
    if not is_researcher(user):
        return []
    labels = {
        run.tag: run_label(run, user)
        for run in Run.objects.filter(campaign_id=campaign_id, tag__in=tags).only(
            "pk", "tag", "name", "owner_id"
        )
    }
    return [labels.get(tag, "anonymous run") for tag in tags]


def visible_tags(campaign: Campaign, user: UserLike) -> set[str]:
    """Tags of the campaign's runs the user may see by name (``sees_run``)."""
    runs = campaign.runs.only("pk", "campaign", "tag", "owner")
    return {run.tag for run in runs if sees_run(run, user)}


def group_labels(groups: dict[str, list[str]], visible: set[str]) -> dict[str, str]:
    """Group name -> what the user may see of it, given each group's run tags and the tags the
    user may see (``visible_tags``): a group is named only to a user who may see one of its
    runs; the others are "anonymous group #n" (n counts the anonymised groups from 1)."""
    out: dict[str, str] = {}
    hidden = 0
    for name, tags in groups.items():
        if any(tag in visible for tag in tags):
            out[name] = name
        else:
            hidden += 1
            out[name] = f"anonymous group #{hidden}"
    return out
