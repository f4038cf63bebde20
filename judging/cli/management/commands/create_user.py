"""``manage.py create_user NAME --role researcher|annotator|admin``: an account with a role.

The password is typed twice at a prompt, read from standard input (``--password-stdin``, for
scripts), or not set at all (``--invite``): the command then prints a one-time link where the
person sets it. ``judging.core.accounts.account_create`` checks everything first.
"""

from __future__ import annotations

import getpass
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.cli.management.commands._common import as_command_error
from judging.core.accounts import account_create
from judging.core.errors import DomainError
from judging.core.password_links import password_link_issue
from judging.core.roles import ROLES


class Command(BaseCommand):
    help = (
        "Create an account with one or more roles (admin, researcher, annotator): a password "
        "typed twice, read from standard input, or a link printed for the person to set it."
    )
    stealth_options = ("stdin",)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--role",
            action="append",
            required=True,
            choices=ROLES,
            help="admin, researcher or annotator; repeat it for several (--role admin "
            "--role annotator).",
        )
        parser.add_argument("--email", default="")
        how = parser.add_mutually_exclusive_group()
        how.add_argument(
            "--password-stdin",
            action="store_true",
            help="Read the password from the first line of standard input (no prompt).",
        )
        how.add_argument(
            "--invite",
            action="store_true",
            help="Set no password; print a one-time link (valid POOLJUDGE_PASSWORD_LINK_SECONDS) "
            "where the person sets it.",
        )

    def _password(self, opts: dict[str, Any]) -> str:
        stdin = opts.get("stdin") or sys.stdin
        if opts["password_stdin"]:
            return str(stdin.readline()).rstrip("\r\n")
        if not stdin.isatty():
            raise CommandError(
                "no terminal to ask for the password: pass it on standard input with "
                "--password-stdin, or use --invite to print a link where the person sets it"
            )
        first = getpass.getpass("Password: ")
        if getpass.getpass("Password (again): ") != first:
            raise CommandError("the passwords do not match; nothing was created")
        return first

    def handle(self, *args: Any, **opts: Any) -> None:
        password = None if opts["invite"] else self._password(opts)
        try:
            user = account_create(
                username=opts["username"],
                roles=opts["role"],
                email=opts["email"],
                password=password,
            )
        except DomainError as exc:
            raise as_command_error(exc) from None
        self.stdout.write(
            f"created {' and '.join(opts['role'])} {user.get_username()!r} (id {user.pk})"
        )
        if opts["invite"]:
            link = password_link_issue(account=user)
            expires = link.expires_at.strftime("%Y-%m-%d %H:%M %Z")
            self.stdout.write(
                f"set-password link (one use, until {expires}): "
                f"{settings.POOLJUDGE_SECURITY.site_url}{link.path()}"
            )
