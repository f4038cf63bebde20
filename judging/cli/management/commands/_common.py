"""Shared bits of the import commands: finding the campaign, reporting domain errors."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from judging.campaigns.models import Campaign
from judging.core.errors import DomainError, InvalidInput


def add_campaign_argument(parser: CommandParser) -> None:
    parser.add_argument("--campaign", required=True, help="Campaign name or numeric id.")


def get_campaign(ref: str) -> Campaign:
    found = Campaign.objects.filter(pk=int(ref)).first() if ref.isdigit() else None
    found = found or Campaign.objects.filter(name=ref).first()
    if found is None:
        raise CommandError(f"no campaign named or numbered {ref!r}")
    return found


def read_path(path: str) -> Path:
    """The file at ``path``, checked to exist; the service reads it (``judging.core.uploads``)."""
    p = Path(path)
    if not p.is_file():
        raise CommandError(f"{path}: no such file")
    return p


def as_command_error(exc: DomainError) -> CommandError:
    lines = [exc.message]
    if isinstance(exc, InvalidInput):
        for p in exc.problems:
            # a multi-file import names the file (location) and its line
            where = "".join(
                f"{part}: " for part in (p.location, f"line {p.line}" if p.line else "") if part
            )
            lines.append(f"  {where}{p.message}")
        if exc.total > len(exc.problems):
            lines.append(f"  ... and {exc.total - len(exc.problems)} more problem(s)")
    return CommandError("\n".join(lines))
