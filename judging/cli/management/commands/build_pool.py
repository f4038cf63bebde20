from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
)
from judging.core.errors import DomainError
from judging.pools.models import PoolSegments, PoolState, PoolVersion
from judging.workflows.pools import pool_built, pool_requested


class Command(BaseCommand):
    help = (
        "Build the next pool version of a campaign. Queues a Celery task (runs inline without "
        "a broker); --now builds in this process."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("--strategy", help="default: the campaign's (usually depth)")
        parser.add_argument("--depth", type=int)
        parser.add_argument("--budget", type=int)
        parser.add_argument("--runs", help="comma-separated run tags; default: the pooled runs")
        parser.add_argument("--params", help='strategy parameters as JSON, e.g. {"beta": 0.1}')
        parser.add_argument(
            "--segments",
            choices=PoolSegments.values,
            help="what answer runs contribute: ranked (default: their ranked list to the depth), "
            "received (every reference of their answer) or cited (the references their answer "
            "cites); runs without answers contribute their ranked list",
        )
        parser.add_argument(
            "--now", action="store_true", help="build here and now instead of queueing a task"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        runs = None
        if opts["runs"]:
            tags = [t.strip() for t in opts["runs"].split(",") if t.strip()]
            runs = list(campaign.runs.filter(tag__in=tags))
            missing = set(tags) - {r.tag for r in runs}
            if missing:
                raise CommandError(f"no such runs in {campaign}: {', '.join(sorted(missing))}")
        try:
            params = json.loads(opts["params"]) if opts["params"] else None
        except json.JSONDecodeError as exc:
            raise CommandError(f"--params is not valid JSON: {exc}") from None
        try:
            version, created = pool_requested(
                campaign=campaign,
                strategy=opts["strategy"],
                depth=opts["depth"],
                budget=opts["budget"],
                runs=runs,
                params=params,
                segments=opts["segments"],
            )
        except DomainError as exc:
            raise as_command_error(exc) from None
        if opts["now"]:
            pool_built(pool_id=version.pk)
        version = PoolVersion.objects.get(pk=version.pk)
        if not created:
            self.stdout.write(f"a build is already {version.state}: #{version.pk}")
        if version.state == PoolState.BUILT:
            self.stdout.write(
                f"pool version {version.number} built{_segments(version)}: "
                f"{version.num_documents} documents "
                f"({version.num_added} new, {version.num_to_judge} to judge, "
                f"{version.num_missing_text} without text)"
            )
        elif version.state == PoolState.FAILED:
            raise CommandError(f"pool build #{version.pk} failed: {version.error}")
        else:
            self.stdout.write(
                f"pool build #{version.pk} is {version.state}; follow it at "
                f"/api/v1/pools/{version.pk}/"
            )


def _segments(version: PoolVersion) -> str:
    """What answer runs contributed, when not their ranked lists."""
    if version.segments == PoolSegments.RANKED:
        return ""
    return f" (answer runs' {version.segments} segments)"
