"""Editing a draft nugget bank, one topic at a time (the rules: ``assessments.nuggets``): each
operation locks the bank, checks that the edit was made on the topic's latest state (``base``),
changes the topic's nuggets, renumbers their positions and writes one ``NuggetEdit`` with the
nuggets it touched before and after."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from judging.assessments.models import (
    Nugget,
    NuggetBank,
    NuggetBankState,
    NuggetEdit,
    NuggetImportance,
)
from judging.assessments.nugget_selectors import topic_of
from judging.assessments.nuggets import (
    as_json,
    importance_problem,
    keys_used,
    limits,
    number_of,
    text_problem,
)
from judging.campaigns.models import Topic
from judging.core.errors import Conflict, InvalidInput
from judging.core.roles import UserLike, account
from metrics.problems import Problem

OPS = ("add", "reword", "importance", "delete", "merge", "split", "move")


@dataclass
class _Editing:
    """A topic of a draft being edited: its nuggets in order (the list an operation changes),
    the bank (locked) and who edits."""

    bank: NuggetBank
    topic: Topic
    nuggets: list[Nugget]
    by: Any

    def find(self, key: str, where: str = "key") -> Nugget:
        for n in self.nuggets:
            if n.key == key:
                return n
        raise InvalidInput(
            f"no nugget {key!r} in topic {self.topic.qid!r}",
            [Problem.at(where, f"{str(key)[:40]!r} is not a key of the topic's nuggets")],
        )

    def room(self, more: int) -> None:
        most, _ = limits()
        if len(self.nuggets) + more > most:
            raise InvalidInput(
                f"topic {self.topic.qid!r} would have more than {most} nuggets",
                [Problem.at("topic", f"{len(self.nuggets)} nuggets already; the limit is {most}")],
            )

    def new_key(self) -> str:
        used = keys_used([self.topic.pk])[self.topic.pk]
        used = max([used, *(number_of(n.key) for n in self.nuggets)])
        return f"n{used + 1}"

    def check_text(self, text: Any, where: str, *, other_than: Sequence[Nugget] = ()) -> str:
        bad = text_problem(text, where)
        if bad is None:
            normal = " ".join(str(text).split()).casefold()
            for n in self.nuggets:
                if n not in other_than and " ".join(n.text.split()).casefold() == normal:
                    bad = Problem.at(where, f"the same text as nugget {n.key}")
        if bad is not None:
            raise InvalidInput("the nugget's text is not valid", [bad])
        return str(text).strip()

    def record(
        self, op: str, before: Sequence[dict[str, Any]], after: Sequence[Nugget]
    ) -> NuggetEdit:
        """Renumber the topic's positions (the list's order), save, and write the edit."""
        changed = [n for i, n in enumerate(self.nuggets) if n.pk is not None and n.position != i]
        for position, n in enumerate(self.nuggets):
            n.position = position
        if changed:
            Nugget.objects.bulk_update(changed, ["position"])
        return NuggetEdit.objects.create(
            bank=self.bank,
            topic=self.topic,
            op=op,
            before=list(before),
            after=[as_json(n) for n in after],
            editor=self.by,
        )


def _editing(bank: NuggetBank, qid: str, base: int, by: UserLike) -> _Editing:
    """Lock the bank and check the edit may be made: a draft, a topic of its campaign, and
    ``base`` the topic's latest edit. Inside the caller's transaction."""
    who = account(by)
    locked = NuggetBank.objects.select_for_update().get(pk=bank.pk)
    if locked.state == NuggetBankState.PUBLISHED:
        raise Conflict(
            f"nugget bank v{locked.number} is published: it is frozen and takes no edit; "
            "copy it into a new draft to change it"
        )
    topic = topic_of(locked, qid)
    last = NuggetEdit.objects.filter(bank=locked, topic=topic).select_related("editor")
    latest = last.order_by("-pk").first()
    if (latest.pk if latest else 0) != base:
        said = (
            f"edit #{latest.pk} ({latest.op} by {latest.editor or 'someone'} at "
            f"{latest.edited_at:%Y-%m-%d %H:%M:%S})"
            if latest is not None
            else "no edit at all"
        )
        raise Conflict(
            f"topic {qid!r} of nugget bank v{locked.number} changed since you loaded it: its "
            f"latest is {said}, not #{base}; reload it and edit again"
        )
    nuggets = list(Nugget.objects.filter(bank=locked, topic=topic).order_by("position", "pk"))
    return _Editing(locked, topic, nuggets, who)


def nugget_add(
    *,
    bank: NuggetBank,
    qid: str,
    text: str,
    importance: str,
    base: int,
    by: UserLike,
    sources: Sequence[str] = (),
    position: int | None = None,
) -> NuggetEdit:
    """Add a nugget to the topic under a new key, at ``position`` (0-based; None: last)."""
    bad = importance_problem(importance, "importance")
    if bad is not None:
        raise InvalidInput("the importance is not valid", [bad])
    with transaction.atomic():
        e = _editing(bank, qid, base, by)
        clean = e.check_text(text, "text")
        e.room(1)
        n = Nugget(
            bank=e.bank,
            topic=e.topic,
            key=e.new_key(),
            position=0,
            text=clean,
            importance=importance,
            sources=list(dict.fromkeys(str(s) for s in sources)),
        )
        at = len(e.nuggets) if position is None else max(0, min(position, len(e.nuggets)))
        e.nuggets.insert(at, n)
        n.position = at
        n.save()
        return e.record("add", [], [n])


def nugget_reword(
    *, bank: NuggetBank, qid: str, key: str, text: str, base: int, by: UserLike
) -> NuggetEdit:
    """Give the nugget ``key`` a new text; its key, importance and sources stay."""
    with transaction.atomic():
        e = _editing(bank, qid, base, by)
        n = e.find(key)
        clean = e.check_text(text, "text", other_than=[n])
        before = as_json(n)
        n.text = clean
        n.save(update_fields=["text"])
        return e.record("reword", [before], [n])


def nugget_importance(
    *, bank: NuggetBank, qid: str, key: str, importance: str, base: int, by: UserLike
) -> NuggetEdit:
    """Mark the nugget ``key`` vital or okay."""
    bad = importance_problem(importance, "importance")
    if bad is not None:
        raise InvalidInput("the importance is not valid", [bad])
    with transaction.atomic():
        e = _editing(bank, qid, base, by)
        n = e.find(key)
        before = as_json(n)
        n.importance = importance
        n.save(update_fields=["importance"])
        return e.record("importance", [before], [n])


def nugget_delete(*, bank: NuggetBank, qid: str, key: str, base: int, by: UserLike) -> NuggetEdit:
    """Delete the nugget ``key`` (the history keeps it)."""
    with transaction.atomic():
        e = _editing(bank, qid, base, by)
        n = e.find(key)
        before = as_json(n)
        e.nuggets.remove(n)
        n.delete()
        return e.record("delete", [before], [])


def nuggets_merge(
    *,
    bank: NuggetBank,
    qid: str,
    keys: Sequence[str],
    base: int,
    by: UserLike,
    text: str | None = None,
    importance: str | None = None,
) -> NuggetEdit:
    """Merge two or more nuggets into one new nugget (a new key), at the place of the first
    of them: ``text`` (default: their texts joined by "; "), ``importance`` (default: vital
    when any of them is), their sources joined in order."""
    if len(set(keys)) < 2:
        raise InvalidInput(
            "a merge takes two nuggets or more",
            [Problem.at("keys", f"{len(set(keys))} distinct key(s) given")],
        )
    if importance is not None and (bad := importance_problem(importance, "importance")):
        raise InvalidInput("the importance is not valid", [bad])
    with transaction.atomic():
        e = _editing(bank, qid, base, by)
        parts = [e.find(k, "keys") for k in dict.fromkeys(keys)]
        parts.sort(key=lambda n: n.position)
        joined = "; ".join(n.text for n in parts) if text is None else text
        clean = e.check_text(joined, "text", other_than=parts)
        vital = any(n.importance == NuggetImportance.VITAL for n in parts)
        merged = Nugget(
            bank=e.bank,
            topic=e.topic,
            key=e.new_key(),
            position=parts[0].position,
            text=clean,
            importance=importance or (NuggetImportance.VITAL if vital else NuggetImportance.OKAY),
            sources=list(dict.fromkeys(s for n in parts for s in n.sources)),
        )
        before = [as_json(n) for n in parts]
        at = e.nuggets.index(parts[0])
        for n in parts:
            e.nuggets.remove(n)
            n.delete()
        e.nuggets.insert(at, merged)
        merged.position = at
        merged.save()
        return e.record("merge", before, [merged])


def nugget_split(
    *, bank: NuggetBank, qid: str, key: str, parts: Sequence[str], base: int, by: UserLike
) -> NuggetEdit:
    """Split the nugget ``key`` into two or more new nuggets (new keys), in its place, with
    its importance and sources."""
    texts = [p for p in parts if isinstance(p, str) and p.strip()]
    if len(texts) < 2:
        raise InvalidInput(
            "a split makes two nuggets or more",
            [Problem.at("parts", f"{len(texts)} part(s) with text given")],
        )
    with transaction.atomic():
        e = _editing(bank, qid, base, by)
        old = e.find(key)
        e.room(len(texts) - 1)
        seen: set[str] = set()
        clean = []
        for i, t in enumerate(texts):
            c = e.check_text(t, f"parts[{i}]", other_than=[old])
            if c.casefold() in seen:
                raise InvalidInput(
                    "the parts repeat a text", [Problem.at(f"parts[{i}]", "given twice")]
                )
            seen.add(c.casefold())
            clean.append(c)
        before = as_json(old)
        first = number_of(e.new_key())
        at = e.nuggets.index(old)
        e.nuggets.remove(old)
        old.delete()
        made = []
        for i, t in enumerate(clean):
            n = Nugget(
                bank=e.bank,
                topic=e.topic,
                key=f"n{first + i}",
                position=at + i,
                text=t,
                importance=old.importance,
                sources=list(old.sources),
            )
            made.append(n)
        e.nuggets[at:at] = made
        Nugget.objects.bulk_create(made)
        return e.record("split", [before], made)


def nugget_move(
    *, bank: NuggetBank, qid: str, key: str, to: int, base: int, by: UserLike
) -> NuggetEdit:
    """Move the nugget ``key`` to position ``to`` (0-based, clamped to the list) of its topic."""
    with transaction.atomic():
        e = _editing(bank, qid, base, by)
        n = e.find(key)
        before = as_json(n)
        e.nuggets.remove(n)
        at = max(0, min(int(to), len(e.nuggets)))
        e.nuggets.insert(at, n)
        return e.record("move", [before], [n])


def nugget_edit(
    *,
    bank: NuggetBank,
    topic: str,
    op: str,
    base: int,
    by: UserLike,
    key: str | None = None,
    keys: Sequence[str] | None = None,
    text: str | None = None,
    importance: str | None = None,
    parts: Sequence[str] | None = None,
    to: int | None = None,
    position: int | None = None,
    sources: Sequence[str] | None = None,
) -> NuggetEdit:
    """One operation named ``op`` (one of :data:`OPS`) on the topic ``topic`` (a qid), with
    the arguments it takes (``InvalidInput`` naming a missing one): what the API's and the
    editing page's requests say."""
    given: dict[str, Any] = {
        "key": key, "keys": keys, "text": text, "importance": importance, "parts": parts, "to": to
    }  # fmt: skip

    def need(*names: str) -> dict[str, Any]:
        missing = [n for n in names if given[n] is None]
        if missing:
            raise InvalidInput(
                f"{op} needs {', '.join(missing)}",
                [Problem.at(n, f"required for {op}") for n in missing],
            )
        return {n: given[n] for n in names}

    common: dict[str, Any] = {"bank": bank, "qid": topic, "base": base, "by": by}
    if op == "add":
        args = need("text", "importance") | {"sources": sources or (), "position": position}
        return nugget_add(**common, **args)
    if op == "reword":
        return nugget_reword(**common, **need("key", "text"))
    if op == "importance":
        return nugget_importance(**common, **need("key", "importance"))
    if op == "delete":
        return nugget_delete(**common, **need("key"))
    if op == "merge":
        return nuggets_merge(**common, **need("keys"), text=text, importance=importance)
    if op == "split":
        return nugget_split(**common, **need("key", "parts"))
    if op == "move":
        return nugget_move(**common, **need("key", "to"))
    raise InvalidInput(
        "unknown edit", [Problem.at("op", f"{str(op)[:20]!r} is not one of {', '.join(OPS)}")]
    )
