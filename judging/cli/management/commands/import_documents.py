from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.campaigns import formats
from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
    read_path,
)
from judging.core.errors import DomainError
from judging.pools.models import PoolVersion
from judging.workflows.documents import documents_imported, missing_documents_imported


class Command(BaseCommand):
    help = (
        "Import documents: JSONL, TREC <DOC>, TSV or SMART .I/.T/.A/.B/.W (plain or gzip). "
        "With --only-missing, store only the pooled documents that have no text yet, "
        "streaming the files (a whole collection may be given): the others are ignored."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("paths", nargs="+", metavar="FILE")
        parser.add_argument("--format", choices=formats.DOCUMENT_FORMATS)
        parser.add_argument(
            "--only-missing",
            action="store_true",
            help="Store only the pooled documents without text; all the files are validated "
            "first and a docid wanted from two files is an error.",
        )
        parser.add_argument(
            "--pool-version",
            type=int,
            metavar="N",
            help="With --only-missing: only those pool version N waits for (default: any).",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        paths = [read_path(p) for p in opts["paths"]]
        if opts["pool_version"] is not None and not opts["only_missing"]:
            raise CommandError("--pool-version goes with --only-missing")
        try:
            if opts["only_missing"]:
                version = None
                if opts["pool_version"] is not None:
                    version = (
                        PoolVersion.objects.built()
                        .filter(campaign=campaign, number=opts["pool_version"])
                        .first()
                    )
                    if version is None:
                        raise CommandError(
                            f"campaign {campaign.name!r} has no built pool version "
                            f"{opts['pool_version']}"
                        )
                summary = missing_documents_imported(
                    campaign=campaign,
                    sources=[(p, str(p)) for p in paths],
                    fmt=opts["format"],
                    version=version,
                )
                self.stdout.write(f"missing texts: {summary.sentence()}")
                if summary.missing_docids:
                    more = summary.still_missing - len(summary.missing_docids)
                    shown = ", ".join(summary.missing_docids) + (
                        f" and {more} more" if more else ""
                    )
                    self.stdout.write(f"still without text: {shown}")
                return
            for path, raw in zip(paths, opts["paths"], strict=True):
                done = documents_imported(
                    campaign=campaign, data=path, fmt=opts["format"], source=raw
                )
                prefix = f"{raw}: " if len(paths) > 1 else ""
                self.stdout.write(
                    f"{prefix}documents: {done.created} created, {done.updated} updated"
                )
        except DomainError as exc:
            raise as_command_error(exc) from None
