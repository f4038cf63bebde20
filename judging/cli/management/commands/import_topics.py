from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from judging.campaigns import formats
from judging.campaigns.services import topics_import
from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
    read_path,
)
from judging.core.errors import DomainError


class Command(BaseCommand):
    help = "Import topics: TREC <top>, JSONL or SMART .I/.W (plain or gzip)."

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("path")
        parser.add_argument("--format", choices=formats.TOPIC_FORMATS)

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        try:
            summary = topics_import(
                campaign=campaign,
                data=read_path(opts["path"]),
                fmt=opts["format"],
                source=opts["path"],
            )
        except DomainError as exc:
            raise as_command_error(exc) from None
        self.stdout.write(
            f"topics: {summary.created} created, {summary.updated} updated, "
            f"{summary.unchanged} unchanged"
        )
