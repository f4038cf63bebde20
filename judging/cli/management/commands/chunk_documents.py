from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.campaigns.passages import chunker_help
from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
    read_path,
)
from judging.core.errors import DomainError
from judging.workflows.passages import chunking_made


class Command(BaseCommand):
    help = (
        "Cut a campaign's documents into passages (a chunking): with a named chunker, or "
        "imported from a file of docid, passage_id, start, end (JSON lines or tab-separated). "
        "Runs then rank passages as docid#pid; judgments made on one chunking carry to another "
        "(carry_qrels)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument(
            "--name", required=True, help="The chunking's name (passage ids use it)."
        )
        way = parser.add_mutually_exclusive_group(required=True)
        way.add_argument("--chunker", metavar="SPEC", help=chunker_help())
        way.add_argument("--passages", metavar="FILE", help="The team's own passages.")

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        try:
            chunking = chunking_made(
                campaign=campaign,
                name=opts["name"],
                spec=opts["chunker"],
                data=read_path(opts["passages"]) if opts["passages"] else None,
            )
        except DomainError as exc:
            raise as_command_error(exc) from None
        if not chunking.num_passages:
            raise CommandError("no passage")  # never: the service refuses an empty chunking
        passages, documents = chunking.num_passages, chunking.num_documents
        self.stdout.write(
            f"chunking {chunking.name!r} ({chunking.spec}): {passages:,} passage"
            f"{'s' if passages != 1 else ''} of {documents:,} document"
            f"{'s' if documents != 1 else ''}"
        )
