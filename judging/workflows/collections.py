"""A whole TREC collection arrives: a campaign with its topics, documents, runs and qrels.

``collection_imported`` validates every file before it stores anything (the same readers and
checks as each single import: ``topics_import``, ``documents_import``, ``run_submit``,
``qrels_import``), then stores them all in one transaction, and the qrels version is evaluated
as after any qrels import (``workflows.qrels``). Without a topics file the topics are created
from the topic ids of the qrels and runs, with no title (``Topic.id_only``).

Which runs are pooled is said once for the collection: all, none, or inferred from the qrels
(``metrics.pooling.inference``: the runs whose top documents are judged, on every analysed topic,
to the depth the qrels show), and an explicit list (the admin page's checkboxes) wins over all
three. The campaign's ``run_pooling`` is for runs submitted later, not these. An inferred
pooling also sets the campaign's ``pool_depth`` and, inferred on a subset of the topics, its
``pooled_topics``: what bias and reusability analyses default to.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from judging.assessments.services import qrels_read
from judging.campaigns.models import TOPIC_SPEC_MAX_LENGTH, Campaign, RunPooling, ScorePrecision
from judging.campaigns.models import Run as RunModel
from judging.campaigns.services import (
    campaign_create,
    campaign_validate,
    documents_check,
    run_first_lines,
    run_read,
    topics_from_ids,
    topics_import,
    topics_read,
)
from judging.core import uploads
from judging.core.errors import InvalidInput, TooLarge
from judging.core.roles import Account
from judging.evaluation.bias import topic_spec
from judging.evaluation.models import EvalMode
from judging.evaluation.services import evaluations_after_qrels
from judging.workflows.documents import documents_imported
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from metrics.io import Run
from metrics.io.limits import id_problem
from metrics.pooling.inference import PoolInference, infer_pooling
from metrics.pooling.runs import topic_sort_key
from metrics.problems import Problem

POOLED_RUNS = ("all", "none", "infer")
IMPORT_ACCOUNT = "pooljudge-import"


@dataclass(frozen=True)
class NamedFile:
    """One file of the collection: the name its problems are reported under, and its content
    (a path, an upload or bytes: ``core.uploads.Source``)."""

    name: str
    data: uploads.Source


@dataclass
class PlannedRun:
    tag: str
    file: str
    group: str
    topics: int
    entries: int
    pooled: bool
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.tag,
            "file": self.file,
            "group": self.group,
            "topics": self.topics,
            "entries": self.entries,
            "pooled": self.pooled,
            "warnings": self.warnings,
        }


@dataclass
class CollectionPlan:
    """What an import stores (``stored`` False: a dry run, or the plan before its apply)."""

    campaign: str
    measures: list[str]
    topics: int
    topics_from: str  # "file" or "ids"
    documents: int
    judgments: int
    qrels_topics: int
    pooled_runs: str
    runs: list[PlannedRun]
    pooling: PoolInference | None = None
    # what the campaign's analyses default to (``Campaign.pool_depth`` and ``pooled_topics``):
    # the inferred depth (None: the campaign's default) and the topics the pooling was inferred
    # on (a topic spec; empty: every topic)
    pool_depth: int | None = None
    pooled_topics: str = ""
    notes: list[str] = field(default_factory=list)
    stored: bool = False
    campaign_id: int | None = None
    qrels_version: int | None = None
    topic_ids: list[str] = field(default_factory=list, repr=False)  # what is stored

    def as_dict(self) -> dict[str, Any]:
        return {
            "campaign": self.campaign,
            "campaign_id": self.campaign_id,
            "stored": self.stored,
            "measures": self.measures,
            "topics": self.topics,
            "topics_from": self.topics_from,
            "documents": self.documents,
            "judgments": self.judgments,
            "qrels_topics": self.qrels_topics,
            "qrels_version": self.qrels_version,
            "pooled_runs": self.pooled_runs,
            "runs_pooled": sum(r.pooled for r in self.runs),
            "runs": [r.as_dict() for r in self.runs],
            "pooling": self.pooling.as_dict() if self.pooling is not None else None,
            "pool_depth": self.pool_depth,
            "pooled_topics": self.pooled_topics,
            "notes": self.notes,
        }


def tag_from_name(path: str) -> str | None:
    """TREC archives name runs ``input.<tag>[.gz]``; a JSON run (``{qid: {docid: score}}``,
    no tag column) is named by its file, ``<tag>.json[.gz]``; otherwise the file's tag column is
    used."""
    name = Path(path).name
    name = name[:-3] if name.endswith(".gz") else name
    if name.startswith("input."):
        return name[len("input.") :]
    if name.endswith(".json"):
        return name[: -len(".json")]
    return None


_RANGE = re.compile(r"^(\d+)-(\d+)$")


def topic_ranges(text: str, *, location: str = "infer_topics") -> list[str]:
    """Topic ids from ``601-650,700,MB01``: numeric ranges (inclusive) and single ids."""
    out: list[str] = []
    for part in (p.strip() for p in text.replace(" ", ",").split(",")):
        if not part:
            continue
        m = _RANGE.match(part)
        if m is None:
            out.append(part)
            continue
        low, high = int(m.group(1)), int(m.group(2))
        if high < low:
            raise InvalidInput(
                "the topics to analyse are not valid",
                [Problem.at(location, f"{part!r} is not a range low-high")],
            )
        if len(out) + high - low + 1 > settings.POOLJUDGE_UPLOADS.max_infer_topics:
            raise InvalidInput(
                "the topics to analyse are too many",
                [
                    Problem.at(
                        location,
                        f"at most {settings.POOLJUDGE_UPLOADS.max_infer_topics:,} topic ids "
                        "(POOLJUDGE_MAX_INFER_TOPICS)",
                    )
                ],
            )
        out.extend(str(i) for i in range(low, high + 1))
    if not out:
        raise InvalidInput(
            "the topics to analyse are not valid", [Problem.at(location, "no topic ids given")]
        )
    return out


def import_account() -> Account:
    """The owner of a collection's runs when nobody is named: a system account that cannot log
    in (inactive, no password, no roles), so the runs belong to the collection, not to whoever
    imported it; admins see and manage them as any run."""
    user, _ = get_user_model().objects.get_or_create(
        username=IMPORT_ACCOUNT, defaults={"is_active": False}
    )
    if user.has_usable_password():
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


class _Rankings(Mapping[str, Sequence[str]]):
    """A run's rankings in trec_eval order, made on demand (``infer_pooling``'s input)."""

    def __init__(self, run: Run) -> None:
        self.run = run

    def __getitem__(self, qid: str) -> Sequence[str]:
        if qid not in self.run:
            raise KeyError(qid)
        return self.run.ranking(qid)

    def __iter__(self) -> Iterator[str]:
        return iter(self.run.qids)

    def __len__(self) -> int:
        return len(self.run.qids)

    def __contains__(self, qid: object) -> bool:
        return qid in self.run


class _Problems:
    """Problems of several files, each named by its file (``location``) and line."""

    def __init__(self) -> None:
        self.items: list[Problem] = []
        self.total = 0
        self.files: list[str] = []

    def add(self, file: str, line: int, message: str) -> None:
        self.items.append(Problem(line, message, file))
        self.total += 1
        if file not in self.files:
            self.files.append(file)

    def add_error(self, file: str, exc: InvalidInput) -> None:
        if not exc.problems:
            self.add(file, 0, exc.message)
            return
        for p in exc.problems:
            self.add(file, p.line, f"{p.location}: {p.message}" if p.location else p.message)
        self.total += exc.total - len(exc.problems)

    def raise_if_any(self) -> None:
        if not self.total:
            return
        limit = settings.POOLJUDGE_UPLOADS.max_problems
        shown = sorted(self.items, key=lambda p: (self.files.index(p.location or ""), p.line))
        raise InvalidInput(
            f"{len(self.files)} file(s) have problems ({', '.join(self.files)}); "
            "nothing was stored",
            shown[:limit],
            total=self.total,
            source=self.files[0],
        )


def _read_groups(file: NamedFile, problems: _Problems) -> dict[str, str]:
    """``run<TAB>group`` lines (a first line ``run<TAB>group`` is the header)."""
    try:
        upload = uploads.read(
            file.data,
            what="the groups file",
            limit=settings.POOLJUDGE_UPLOADS.max_upload_bytes,
            source=file.name,
        )
    except InvalidInput as exc:
        problems.add_error(file.name, exc)
        return {}
    except TooLarge as exc:
        raise TooLarge(f"{file.name}: {exc.message}") from None
    limit = RunModel._meta.get_field("group").max_length or 0
    groups: dict[str, str] = {}
    for number, raw in enumerate(upload.data.splitlines(), 1):
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            problems.add(file.name, number, "not UTF-8 text")
            continue
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split("\t")]
        if number == 1 and [p.lower() for p in parts[:2]] == ["run", "group"]:
            continue
        if len(parts) < 2 or not parts[0]:
            problems.add(file.name, number, "expected 'run<TAB>group'")
        elif len(parts[1]) > limit or "\x00" in parts[1]:
            problems.add(file.name, number, f"a group is at most {limit} characters, no NUL")
        elif groups.get(parts[0], parts[1]) != parts[1]:
            problems.add(file.name, number, f"run {parts[0]!r} has two groups")
        else:
            groups[parts[0]] = parts[1]
    return groups


def _natural(qid: str) -> tuple[int, int | str]:
    return (0, int(qid)) if qid.isdigit() else (1, qid)


def collection_plan(
    *,
    name: str,
    measures: list[str] | None = None,
    scale: list[dict[str, Any]] | None = None,
    relevance_threshold: int = 1,
    description: str = "",
    run_pooling: str = RunPooling.AUTO,
    score_precision: str = ScorePrecision.DOUBLE,
    topics: NamedFile | None = None,
    documents: Sequence[NamedFile] = (),
    qrels: NamedFile | None = None,
    runs: Sequence[NamedFile] = (),
    groups: NamedFile | None = None,
    pooled_runs: str = "infer",
    infer_topics: Collection[str] | None = None,
    pooled_tags: Collection[str] | None = None,
    created_by: Account | None = None,
) -> CollectionPlan:
    """Validate every file of a collection and say what ``collection_imported`` would store;
    stores nothing. Raises ``InvalidInput`` listing every problem, each named by its file
    (``location``) and line, or ``TooLarge`` naming the file."""
    problems = _Problems()
    if pooled_runs not in POOLED_RUNS:
        raise InvalidInput(
            "pooled_runs is not valid",
            [Problem.at("pooled_runs", f"{pooled_runs!r} is not one of {', '.join(POOLED_RUNS)}")],
        )
    if pooled_runs == "infer" and qrels is None and pooled_tags is None:
        raise InvalidInput(
            "inferring the pooled runs needs the qrels",
            [Problem.at("pooled_runs", "give a qrels file, or say all or none")],
        )
    try:
        campaign = campaign_validate(
            name=name,
            description=description,
            scale=scale,
            relevance_threshold=relevance_threshold,
            run_pooling=run_pooling,
            score_precision=score_precision,
            measures=measures,
            created_by=created_by,
        )
    except InvalidInput as exc:
        problems.add_error("campaign", exc)
        campaign = Campaign(name=name, relevance_threshold=relevance_threshold)
        if scale is not None:
            campaign.scale = scale

    def guarded(file: NamedFile, step: Any, **kwargs: Any) -> Any:
        try:
            return step(data=file.data, source=file.name, **kwargs)
        except InvalidInput as exc:
            problems.add_error(file.name, exc)
        except TooLarge as exc:
            raise TooLarge(f"{file.name}: {exc.message}") from None
        return None

    known: set[str] | None = None
    if topics is not None:
        records = guarded(topics, topics_read)
        known = {r.qid for r in records} if records is not None else None
    num_documents = 0
    for doc_file in documents:
        num_documents += guarded(doc_file, documents_check) or 0

    read_qrels = guarded(qrels, qrels_read, campaign=campaign) if qrels is not None else None
    table = read_qrels[0] if read_qrels is not None else None
    if qrels is not None and read_qrels is not None and known is not None:
        unknown = [q for q in read_qrels[0].qids if q not in known]
        first = run_first_lines(read_qrels[1], set(unknown))
        for q in unknown:
            problems.add(qrels.name, first.get(q, 0), f"topic {q!r} is not in the topics file")
    del read_qrels

    group_of = _read_groups(groups, problems) if groups is not None else {}
    read_runs: dict[str, Run] = {}
    planned: list[PlannedRun] = []
    files_of: dict[str, str] = {}
    tag_limit = settings.POOLJUDGE_UPLOADS.max_tag_bytes
    for run_file in runs:
        got = guarded(run_file, run_read)
        if got is None:
            continue
        run, raw = got
        tag = tag_from_name(run_file.name)
        if tag is None:
            if len(run.tags) != 1:
                problems.add(
                    run_file.name,
                    0,
                    f"the file has {len(run.tags)} distinct tags: name it input.<tag>[.gz]",
                )
                continue
            tag = run.tags[0]
        bad = id_problem("tag", tag, tag_limit)
        if not tag or tag.split() != [tag]:
            bad = f"a tag is 1-{tag_limit} bytes (UTF-8) without white space"
        if bad is not None:
            problems.add(run_file.name, 0, f"run tag {tag[:40]!r}: {bad}")
            continue
        if tag in files_of:
            problems.add(run_file.name, 0, f"run tag {tag!r} is also the tag of {files_of[tag]}")
            continue
        files_of[tag] = run_file.name
        if known is not None:
            unknown = [q for q in run.qids if q not in known]
            first = run_first_lines(raw, set(unknown))
            for q in unknown:
                problems.add(
                    run_file.name, first.get(q, 0), f"topic {q!r} is not in the topics file"
                )
        read_runs[tag] = run
        planned.append(
            PlannedRun(
                tag=tag,
                file=run_file.name,
                group=group_of.get(tag, ""),
                topics=len(run.qids),
                entries=len(run),
                pooled=pooled_runs == "all",
                warnings=[str(w) for w in run.warnings],
            )
        )
        del raw
    problems.raise_if_any()

    notes = []
    unused = sorted(set(group_of) - set(read_runs))
    if unused:
        notes.append(
            f"{len(unused)} run(s) of the groups file have no run file: {', '.join(unused[:10])}"
        )
    if groups is not None:
        ungrouped = [r.tag for r in planned if not r.group]
        if ungrouped:
            notes.append(f"{len(ungrouped)} run(s) have no group: {', '.join(ungrouped[:10])}")

    inference = None
    if table is not None and pooled_runs == "infer" and read_runs:
        judged = {q: set(table.judgments(q)) for q in table.qids}
        inference = infer_pooling(
            {tag: _Rankings(run) for tag, run in read_runs.items()},
            judged,
            topics=set(infer_topics) if infer_topics is not None else None,
        )
        inferred = set(inference.pooled)
        for r in planned:
            r.pooled = r.tag in inferred
        if inference.depth == 0:
            notes.append("the qrels show no pool depth: no run is inferred to be pooled")
    if pooled_tags is not None:
        chosen = set(pooled_tags)
        strange = sorted(chosen - set(read_runs))
        if strange:
            raise InvalidInput(
                "runs chosen for the pool are not in the collection",
                [Problem.at("pooled", f"no run file for {t!r}") for t in strange[:20]],
            )
        for r in planned:
            r.pooled = r.tag in chosen

    if known is not None:
        qids = sorted(known, key=_natural)
        topics_from = "file"
    else:
        found = set(table.qids if table is not None else ())
        for run in read_runs.values():
            found.update(run.qids)
        qids = sorted(found, key=_natural)
        topics_from = "ids"
        if qids:
            notes.append(
                f"no topics file: {len(qids)} topic(s) are created from the ids of the qrels "
                "and runs, with no title yet"
            )
    pool_depth, pooled_topics = _analysis_defaults(inference, infer_topics, qids, notes)
    return CollectionPlan(
        campaign=campaign.name,
        measures=list(campaign.measures),
        topics=len(qids),
        topics_from=topics_from,
        documents=num_documents,
        judgments=len(table) if table is not None else 0,
        qrels_topics=len(table.qids) if table is not None else 0,
        pooled_runs=pooled_runs if pooled_tags is None else "chosen",
        runs=planned,
        pooling=inference,
        pool_depth=pool_depth,
        pooled_topics=pooled_topics,
        notes=notes,
        topic_ids=qids,
    )


def _analysis_defaults(
    inference: PoolInference | None,
    infer_topics: Collection[str] | None,
    qids: Sequence[str],
    notes: list[str],
) -> tuple[int | None, str]:
    """What the campaign's bias and reusability analyses default to, from the inference: its
    depth, and the topics it was inferred on when they are a subset (``--infer-topics``: Robust
    2003's 601-650, whose 50 old topics were judged in earlier years' pools, not from these
    runs). Nothing without an inferred depth; every topic when the subset cannot be stored as
    one topic spec (said in ``notes``)."""
    if inference is None or not inference.depth:
        return None, ""
    spec = ""
    pooled = sorted(set(inference.topics), key=topic_sort_key)
    if infer_topics is not None and set(pooled) != set(qids):
        spec = topic_spec(pooled)
        too_many = len(pooled) > settings.POOLJUDGE_EVALUATION.bias_max_topics
        if too_many or len(spec.encode()) > TOPIC_SPEC_MAX_LENGTH or "," in "".join(pooled):
            notes.append(
                f"the {len(pooled)} topics the pooling is inferred on cannot be stored as the "
                "campaign's pooled topics (more than POOLJUDGE_BIAS_MAX_TOPICS, or too scattered "
                "to write out): bias and reusability analyses default to every topic"
            )
            spec = ""
    where = f"the pooled topics {spec}" if spec else "every topic"
    notes.append(
        f"bias and reusability analyses default to {where} at the inferred depth "
        f"{inference.depth} (the campaign's pool depth)"
    )
    return inference.depth, spec


def collection_imported(
    *,
    name: str,
    measures: list[str] | None = None,
    scale: list[dict[str, Any]] | None = None,
    relevance_threshold: int = 1,
    description: str = "",
    run_pooling: str = RunPooling.AUTO,
    score_precision: str = ScorePrecision.DOUBLE,
    topics: NamedFile | None = None,
    documents: Sequence[NamedFile] = (),
    qrels: NamedFile | None = None,
    runs: Sequence[NamedFile] = (),
    groups: NamedFile | None = None,
    pooled_runs: str = "infer",
    infer_topics: Collection[str] | None = None,
    pooled_tags: Collection[str] | None = None,
    created_by: Account | None = None,
    document_source: str = "",
    owner: Account | None = None,
    dry_run: bool = False,
) -> CollectionPlan:
    """Validate every file (``collection_plan``, same arguments), then, unless ``dry_run``,
    store the campaign, its topics, documents, runs (owned by ``owner``, default the
    ``import_account``) and qrels version in one transaction, and evaluate the runs against it
    (tasks after commit, as ``workflows.qrels`` does; in trec_eval mode too, for comparing with
    the collection's published figures). On any problem nothing is stored."""
    # document_source: where the text of pooled documents comes from ("ir_datasets:<id>": read
    # when a pool is built, workflows.pools.pooled_texts_fetched), kept with the campaign
    plan = collection_plan(
        name=name,
        measures=measures,
        scale=scale,
        relevance_threshold=relevance_threshold,
        description=description,
        run_pooling=run_pooling,
        score_precision=score_precision,
        topics=topics,
        documents=documents,
        qrels=qrels,
        runs=runs,
        groups=groups,
        pooled_runs=pooled_runs,
        infer_topics=infer_topics,
        pooled_tags=pooled_tags,
        created_by=created_by,
    )
    if dry_run:
        return plan
    with transaction.atomic():
        campaign = campaign_create(
            name=name,
            description=description,
            scale=scale,
            relevance_threshold=relevance_threshold,
            run_pooling=run_pooling,
            score_precision=score_precision,
            measures=measures,
            document_source=document_source,
            pool_depth=plan.pool_depth or Campaign._meta.get_field("pool_depth").get_default(),
            pooled_topics=plan.pooled_topics,
            created_by=created_by,
        )
        if topics is not None:
            topics_import(campaign=campaign, data=topics.data, source=topics.name)
        else:
            topics_from_ids(campaign=campaign, qids=plan.topic_ids)
        for doc_file in documents:
            documents_imported(campaign=campaign, data=doc_file.data, source=doc_file.name)
        run_owner = owner or import_account()
        files = {f.name: f for f in runs}
        for planned in plan.runs:
            run_submitted(
                campaign=campaign,
                owner=run_owner,
                data=files[planned.file].data,
                tag=planned.tag,
                group=planned.group,
                pooled=planned.pooled,
                source=planned.file,
            )
        if qrels is not None:
            version = qrels_imported(
                campaign=campaign,
                data=qrels.data,
                source=qrels.name,
                note="imported with the collection",
                created_by=created_by,
            )
            plan.qrels_version = version.number
            # a TREC collection is imported to be compared with its published figures: have
            # them ready in trec_eval mode too (the honest ones follow from qrels_imported)
            evaluations_after_qrels(version, EvalMode.TREC_EVAL)
    plan.stored = True
    plan.campaign_id = campaign.pk
    return plan
