from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.demo.rag.story import CAMPAIGN
from judging.demo.rag_load import demo_rag_load
from judging.demo.services import (
    DEMO_USERS,
    demo_judge,
    demo_load,
    demo_sampled_judge,
    demo_sampled_load,
    demo_users_ensure,
)
from judging.demo.track import track_judge, track_load


class Command(BaseCommand):
    help = "Create the demo users and, on an empty database, the demo campaign (local use only)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--force",
            action="store_true",
            help="Run even with DEBUG off (the demo passwords are public).",
        )
        parser.add_argument(
            "--rag",
            action="store_true",
            help="Load the retrieval team's demo instead (docs/guide/rag.md): a help centre "
            "cut into passages, 40 questions, three retrieval setups submitted through the "
            "Python client, pooled, judged, re-chunked with the judgments carried over.",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if not settings.DEBUG and not opts["force"]:
            raise CommandError(
                "load_demo creates users with public passwords; it refuses to run "
                "with DJANGO_DEBUG off (use --force if you really mean it)"
            )
        if opts["rag"]:
            figures = demo_rag_load(say=lambda line: self.stdout.write(f"  {line}"))
            if figures is None:
                self.stdout.write(f"The retrieval demo {CAMPAIGN!r} is loaded already.")
            else:
                self.stdout.write(f"Loaded the retrieval demo {CAMPAIGN!r}.")
            self._users()
            return
        campaign = demo_load()
        if campaign is None:
            self.stdout.write("The database already has campaigns; demo campaign not loaded.")
        else:
            self.stdout.write(f"Loaded the demo campaign {campaign.name!r}.")
            made = demo_judge(campaign)
            if made:
                self.stdout.write(
                    f"Simulated assessors made {made} judgments of pool "
                    "version 1 and published qrels version 1."
                )
            else:
                self.stdout.write(
                    "Pool version 1 is not built yet (a Celery worker builds it); "
                    "judge it in the browser when it is."
                )
            sampled = demo_sampled_load()
            if sampled is not None:
                made = demo_sampled_judge(sampled)
                self.stdout.write(
                    f"Loaded the sampled demo campaign {sampled.name!r}"
                    + (
                        f": a simulated assessor judged the {made} sampled documents of its "
                        "stratified pool and published sampled qrels version 1."
                        if made
                        else " (its stratified pool is not built yet: a Celery worker builds it)."
                    )
                )
            users = demo_users_ensure()
            track = track_load(users)
            if track is not None:
                judged = track_judge(track, users)
                self.stdout.write(
                    f"Loaded the judges' track demo {track.name!r}"
                    + (
                        ": three judges and a jury ranked against people's grades "
                        "(Judges' meta-evaluation)."
                        if judged
                        else " (its pool is not built yet: a Celery worker builds it)."
                    )
                )
        self._users()

    def _users(self) -> None:
        self.stdout.write("Demo users (local use only):")
        for u in DEMO_USERS:
            self.stdout.write(f"  {u.role:<11} username {u.username:<11} password {u.password}")
