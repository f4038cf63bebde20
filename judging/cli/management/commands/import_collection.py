from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.cli.management.commands._common import as_command_error, read_path
from judging.core.errors import DomainError
from judging.workflows.collections import (
    IMPORT_ACCOUNT,
    POOLED_RUNS,
    CollectionPlan,
    NamedFile,
    collection_imported,
    topic_ranges,
)
from judging.workflows.irds_source import collection_from_ir_datasets


class Command(BaseCommand):
    help = (
        "Import a TREC collection in one step: a new campaign with its topics (from a topics "
        "file, or created from the qrels' and runs' topic ids, with no title), documents, run "
        "files (groups from a runs.tsv) and qrels. Every file is validated before anything is "
        "stored, in one transaction; problems name the file and line. --dry-run prints the "
        "plan, stores nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Name of the new campaign.")
        parser.add_argument("--description", default="")
        parser.add_argument("--topics", help="Topics file (TREC <top>, JSONL or SMART).")
        parser.add_argument("--documents", nargs="+", default=[], metavar="FILE")
        parser.add_argument("--qrels", help="TREC qrels file: the campaign's qrels version 1.")
        parser.add_argument("--runs", nargs="+", default=[], metavar="FILE")
        parser.add_argument("--groups", help="runs.tsv: 'run<TAB>group' lines, with a header.")
        parser.add_argument("--measures", nargs="+", metavar="M", help="The campaign's measures.")
        parser.add_argument("--threshold", type=int, default=1, help="Relevance threshold.")
        parser.add_argument(
            "--pooled-runs",
            choices=POOLED_RUNS,
            default="infer",
            help="Which runs are pooled: all, none, or infer them from the qrels (default).",
        )
        parser.add_argument(
            "--infer-topics",
            help="Topics the pooling is inferred on, e.g. 601-650 (default: every qrels topic).",
        )
        parser.add_argument(
            "--owner",
            help=f"Username owning the runs (default: the system account {IMPORT_ACCOUNT!r}, "
            "which cannot log in).",
        )
        parser.add_argument(
            "--ir-datasets",
            metavar="ID",
            help="Take the topics and qrels from an ir_datasets dataset in its local cache "
            "(never downloaded; e.g. cranfield), and the pooled documents' text from its "
            "docstore when a pool is built. Not with --topics or --qrels.",
        )
        parser.add_argument(
            "--beir",
            metavar="DIR_OR_ZIP",
            help="A dataset in BEIR's layout (a folder, or the zip a qrels export with "
            "format=beir gives): its corpus.jsonl, queries.jsonl and qrels/SPLIT.tsv. Not with "
            "--topics, --documents, --qrels or --ir-datasets.",
        )
        parser.add_argument(
            "--beir-split", default="test", help="Which qrels/SPLIT.tsv of --beir (default: test)."
        )
        parser.add_argument(
            "--score-precision",
            choices=["double", "single"],
            default="double",
            help="Compare run scores as doubles (trec_eval 10, default) or rounded to single "
            "precision, as trec_eval 9 and pytrec_eval read them: figures published with those "
            "(TREC's official ones up to 2019) are reproduced only so.",
        )
        parser.add_argument("--scale", help='JSON, e.g. \'[{"grade":0,"label":"No"},...]\'')
        parser.add_argument("--dry-run", action="store_true", help="Validate and print the plan.")

    def handle(self, *args: Any, **opts: Any) -> None:
        owner = None
        if opts["owner"]:
            owner = get_user_model().objects.filter(username=opts["owner"]).first()
            if owner is None:
                raise CommandError(f"no user {opts['owner']!r}")

        def named(path: str) -> NamedFile:
            return NamedFile(path, read_path(path))

        try:
            scale = json.loads(opts["scale"]) if opts["scale"] else None
        except json.JSONDecodeError as exc:
            raise CommandError(f"--scale is not valid JSON: {exc}") from None
        start = time.perf_counter()
        topics = named(opts["topics"]) if opts["topics"] else None
        qrels = named(opts["qrels"]) if opts["qrels"] else None
        documents = [named(p) for p in opts["documents"]]
        source = ""
        if opts["beir"]:
            if topics is not None or qrels is not None or documents or opts["ir_datasets"]:
                raise CommandError(
                    "--beir gives the topics, documents and qrels: not with --topics, "
                    "--documents, --qrels or --ir-datasets"
                )
            topics, corpus, qrels = beir_files(opts["beir"], opts["beir_split"])
            documents = [corpus]
        if opts["ir_datasets"]:
            if topics is not None or qrels is not None:
                raise CommandError(
                    "--ir-datasets gives the topics and qrels: not with --topics or --qrels"
                )
            try:
                dataset = collection_from_ir_datasets(opts["ir_datasets"])
            except DomainError as exc:
                raise as_command_error(exc) from None
            topics = NamedFile(f"{dataset.source} topics", dataset.topics_jsonl())
            if dataset.qrels is not None:
                qrels = NamedFile(f"{dataset.source} qrels", dataset.qrels)
            source = dataset.source if dataset.has_docs else ""
        try:
            infer_topics = topic_ranges(opts["infer_topics"]) if opts["infer_topics"] else None
            plan = collection_imported(
                name=opts["campaign"],
                description=opts["description"],
                measures=opts["measures"],
                relevance_threshold=opts["threshold"],
                scale=scale,
                score_precision=opts["score_precision"],
                topics=topics,
                documents=documents,
                qrels=qrels,
                document_source=source,
                runs=[named(p) for p in opts["runs"]],
                groups=named(opts["groups"]) if opts["groups"] else None,
                pooled_runs=opts["pooled_runs"],
                infer_topics=infer_topics,
                owner=owner,
                dry_run=opts["dry_run"],
            )
        except DomainError as exc:
            raise as_command_error(exc) from None
        for line in plan_lines(plan):
            self.stdout.write(line)
        self.stdout.write(f"({time.perf_counter() - start:.1f} s)")


def beir_files(path: str, split: str) -> tuple[NamedFile, NamedFile, NamedFile]:
    """queries.jsonl, corpus.jsonl and qrels/SPLIT.tsv of a BEIR folder or zip, each checked
    to be there."""
    names = ("queries.jsonl", "corpus.jsonl", f"qrels/{split}.tsv")
    where = Path(path)
    if where.is_dir():
        missing = [n for n in names if not (where / n).is_file()]
        if missing:
            raise CommandError(f"{path}: not a BEIR folder: no {', '.join(missing)}")
        found = [NamedFile(n, where / n) for n in names]
    elif where.is_file() and zipfile.is_zipfile(where):
        with zipfile.ZipFile(where) as archive:
            members = set(archive.namelist())
            missing = [n for n in names if n not in members]
            if missing:
                raise CommandError(f"{path}: not a BEIR zip: no {', '.join(missing)}")
            found = [NamedFile(n, archive.read(n)) for n in names]
    else:
        raise CommandError(f"{path}: no such folder or zip file")
    return found[0], found[1], found[2]


def plan_lines(plan: CollectionPlan) -> list[str]:
    verb = "stored" if plan.stored else "would store (dry run: nothing stored)"
    head = f"campaign {plan.campaign!r}"
    if plan.campaign_id is not None:
        head += f" (id {plan.campaign_id})"
    pooled = sum(r.pooled for r in plan.runs)
    lines = [
        f"{head}: {verb}",
        f"  measures: {', '.join(plan.measures)}",
        f"  topics: {plan.topics}"
        + (" (from the topics file)" if plan.topics_from == "file" else " (id only, no title yet)"),
        f"  documents: {plan.documents}",
        f"  judgments: {plan.judgments} on {plan.qrels_topics} topic(s)"
        + (f" (qrels version {plan.qrels_version})" if plan.qrels_version else ""),
        f"  runs: {len(plan.runs)}, pooled: {pooled} ({plan.pooled_runs})",
    ]
    lines += [f"  note: {n}" for n in plan.notes]
    if plan.pooling is not None:
        inf = plan.pooling
        lines.append(
            f"inferred pooling: depth {inf.depth} (up to {inf.tolerance} unjudged allowed), "
            f"{len(inf.pooled)} of {len(inf.runs)} runs pooled, on {len(inf.topics)} topic(s)"
        )
        lines.append(
            "  (k: deepest rank fully judged on most topics; full@k, full@depth: share of "
            "topics fully judged to k, to the pool depth)"
        )
        lines.append(
            f"  {'run':<24} {'k':>5} {'full@k':>7} {'judged@k':>9} {'full@depth':>10} pooled"
        )
        for g in sorted(inf.runs, key=lambda g: (not g.pooled, g.tag)):
            lines.append(
                f"  {g.tag:<24} {g.k:>5} {g.fraction_at_k:>7.2f} {g.judged_at_k:>9.2f} "
                f"{g.fraction_at_depth:>10.2f} " + ("yes" if g.pooled else "no")
            )
    for r in plan.runs:
        lines.extend(f"  run {r.tag}: warning: {w}" for w in r.warnings)
    return lines
