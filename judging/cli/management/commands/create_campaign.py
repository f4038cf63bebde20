from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.campaigns.services import campaign_create
from judging.cli.management.commands._common import as_command_error
from judging.core.errors import DomainError


class Command(BaseCommand):
    help = "Create a campaign (name, scale, relevance threshold, unknown-topic policy, measures)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--description", default="")
        parser.add_argument("--scale", help='JSON, e.g. \'[{"grade":0,"label":"No"},...]\'')
        parser.add_argument("--threshold", type=int, default=1)
        parser.add_argument("--unknown-topics", choices=["reject", "ignore"], default="reject")
        parser.add_argument(
            "--measures", nargs="+", metavar="M", help="e.g. AP P@10 Rprec (default: the usual)."
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            scale = json.loads(opts["scale"]) if opts["scale"] else None
        except json.JSONDecodeError as exc:
            raise CommandError(f"--scale is not valid JSON: {exc}") from None
        try:
            c = campaign_create(
                name=opts["name"],
                description=opts["description"],
                scale=scale,
                relevance_threshold=opts["threshold"],
                unknown_topic_policy=opts["unknown_topics"],
                measures=opts["measures"],
            )
        except DomainError as exc:
            raise as_command_error(exc) from None
        self.stdout.write(f"created campaign {c.name!r} (id {c.pk})")
