"""An annotator judges a leased item: the page's key press and ``POST
/api/v1/leases/{id}/judgment/`` are this one sequence."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judging.assessments import queue
from judging.assessments.models import Judgment, Lease
from judging.autojudge import suggestions
from judging.campaigns.models import Campaign
from judging.core.roles import Account


@dataclass(frozen=True)
class Recorded:
    """What recording a judgment did: the judgment; whether it was stored now (False: the same
    grade again, nothing new); the item's automatic suggestion (arm, grade, label; None when
    the campaign suggests none) and, for the hidden arm, the sentence that may now tell it
    (``reveal``, "" otherwise); the next lease when one was asked for (None: nothing left)."""

    judgment: Judgment
    created: bool
    suggestion: dict[str, Any] | None
    reveal: str
    next_lease: Lease | None = None


def judgment_recorded(
    *,
    lease_id: int,
    annotator: Account,
    grade: Any,
    active_seconds: float = 0.0,
    answers: Any = None,
    then_lease_in: Campaign | None = None,
) -> Recorded:
    """Record ``grade`` and the answer spans marked (``answers``: ``[start, end]`` offsets in the
    document's text, or None) for the item of the annotator's lease (``assessments.queue.
    judgment_record``, same errors) with the item's suggestion, looked up here from the lease
    and never taken from the request (``autojudge.suggestions``); then, with
    ``then_lease_in``, lease the annotator's next item of that campaign (``queue.lease_next``:
    the page moves on, an API client asks for the next item itself)."""
    suggestion = suggestions.suggestion_for_lease(lease_id=lease_id, annotator=annotator)
    judgment, created = queue.judgment_record(
        lease_id=lease_id,
        annotator=annotator,
        grade=grade,
        active_seconds=active_seconds,
        answers=answers,
        **suggestions.recorded(suggestion),
    )
    next_lease = None
    if then_lease_in is not None:
        next_lease = queue.lease_next(campaign=then_lease_in, annotator=annotator)
    return Recorded(
        judgment=judgment,
        created=created,
        suggestion=suggestion,
        reveal=suggestions.reveal_text(suggestion),
        next_lease=next_lease,
    )
