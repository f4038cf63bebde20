from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from judging.campaigns import formats
from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
    read_path,
)
from judging.core.errors import DomainError
from judging.workflows.documents import documents_imported


class Command(BaseCommand):
    help = "Import documents: JSONL, TREC <DOC>, TSV or SMART .I/.T/.A/.B/.W (plain or gzip)."

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("path")
        parser.add_argument("--format", choices=formats.DOCUMENT_FORMATS)

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        try:
            summary = documents_imported(
                campaign=campaign,
                data=read_path(opts["path"]),
                fmt=opts["format"],
                source=opts["path"],
            )
        except DomainError as exc:
            raise as_command_error(exc) from None
        self.stdout.write(f"documents: {summary.created} created, {summary.updated} updated")
