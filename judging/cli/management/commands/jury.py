from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.autojudge import juries
from judging.autojudge.models import JuryMethod
from judging.autojudge.selectors import pool_by_number, qrels_by_number
from judging.cli.management.commands._common import as_command_error, get_campaign
from judging.core import jobs
from judging.core.errors import DomainError


class Command(BaseCommand):
    help = (
        "Make a jury of a campaign's judges (majority, mean, dawid-skene, or defer to people "
        "where they disagree) and run it over a pool version here."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="Campaign name or numeric id.")
        parser.add_argument("name", help="The jury's name (its versions share it).")
        parser.add_argument(
            "--members", required=True, help="the judge ids it combines, comma-separated"
        )
        parser.add_argument("--method", choices=JuryMethod.values, default=JuryMethod.MAJORITY)
        parser.add_argument("--human", type=int, help="defer: the human qrels version's number")
        parser.add_argument("--pool", type=int, help="pool version (default: the latest built)")

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        try:
            ids = [int(x) for x in opts["members"].split(",") if x.strip()]
        except ValueError:
            raise CommandError("--members: judge ids separated by commas, e.g. 3,5,8") from None
        try:
            human = opts["human"]
            jury, run = juries.jury_request(
                campaign=campaign,
                name=opts["name"],
                members=juries.members_by_id(ids),
                method=opts["method"],
                human=qrels_by_number(campaign, human) if human is not None else None,
                pool=pool_by_number(campaign, opts["pool"]),
            )
        except DomainError as exc:
            raise as_command_error(exc) from None
        jobs.compute_here(run.job)
        run.refresh_from_db()
        if run.state != "done":
            raise CommandError(f"the run of {jury} is {run.state}: {run.error}")
        graded = run.cached + run.ok  # labels of this pool: graded before, graded now
        self.stdout.write(
            f"{jury} ({jury.model}) over {run.over}: {graded} of {run.total} documents graded"
        )
        if jury.params.get("method") == JuryMethod.DEFER:
            tally = juries.jury_tally(jury)
            self.stdout.write(
                f"  {run.done - graded} deferred to people (queued first in their topics); "
                f"{tally.people} of the jury's labels are people's grades"
            )
        if run.total > run.done:
            self.stdout.write(
                f"  {run.total - run.done} no member has graded yet (its next run asks again)"
            )
