from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from judging.campaigns.services import run_stored_identically
from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
    read_path,
)
from judging.core.errors import Conflict, DomainError
from judging.workflows.collections import tag_from_name
from judging.workflows.runs import run_submitted


class Command(BaseCommand):
    help = (
        "Import one or more TREC run files (plain or gzip) through the submission service. "
        "All or nothing: every file is validated, and if any is bad none is stored and each bad "
        "file is reported. A file already stored identically (same content, same tag) is "
        "skipped, so an interrupted or repeated batch can simply be run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument("paths", nargs="+")
        parser.add_argument("--owner", required=True, help="Username of the run's owner.")
        parser.add_argument("--tag", help="Run tag (one file only); default: the file's tag.")
        parser.add_argument("--group", default="", help="Group/organisation of the run(s).")
        parser.add_argument("--groups-tsv", help="TSV 'tag<TAB>group' giving each run's group.")
        parser.add_argument("--not-pooled", action="store_true")
        parser.add_argument("--priority", type=int, default=1)

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        owner = get_user_model().objects.filter(username=opts["owner"]).first()
        if owner is None:
            raise CommandError(f"no user {opts['owner']!r}")
        if opts["tag"] and len(opts["paths"]) > 1:
            raise CommandError("--tag names one run; give one file with it")
        groups: dict[str, str] = {}
        if opts["groups_tsv"]:
            for line in Path(opts["groups_tsv"]).read_text().splitlines():
                parts = line.split("\t")
                if len(parts) >= 2 and parts[0] != "run":
                    groups[parts[0].strip()] = parts[1].strip()
        paths = [read_path(path) for path in opts["paths"]]
        done: list[str] = []
        failed: list[str] = []
        with transaction.atomic():  # all or nothing: a bad file rolls back the whole batch
            for path in paths:
                name = str(path)
                tag = opts["tag"] or tag_from_name(name)
                try:
                    with transaction.atomic():  # a savepoint, so the next files still run
                        run = run_submitted(
                            campaign=campaign,
                            owner=owner,
                            data=path,
                            tag=tag,
                            group=groups.get(tag or "", opts["group"]),
                            pooled=False if opts["not_pooled"] else None,
                            priority=opts["priority"],
                            source=name,
                        )
                except Conflict as exc:
                    try:
                        same = run_stored_identically(
                            campaign=campaign, owner=owner, data=path, tag=tag, source=name
                        )
                    except DomainError:
                        same = None
                    if same is None:
                        failed.append(f"{name}: {as_command_error(exc)}")
                    else:
                        done.append(f"run {same.name}: already stored identically, skipped")
                    continue
                except DomainError as exc:
                    failed.append(f"{name}: {as_command_error(exc)}")
                    continue
                done.append(
                    f"run {run.tag}: {run.num_entries} entries, {len(run.topic_counts)} topics"
                )
                done.extend(f"run {run.tag}: warning: {w}" for w in run.all_warnings)
            if failed:
                raise CommandError(
                    f"{len(failed)} of {len(paths)} file(s) are not valid; nothing was stored\n"
                    + "\n".join(failed)
                )
        for line in done:
            self.stdout.write(line)
