from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.core.conf import reference_markdown

REFERENCE = Path("docs") / "reference" / "settings.md"


class Command(BaseCommand):
    help = (
        "Write the settings reference (docs/reference/settings.md) from the declarations in "
        "judging/core/conf.py; --check only says whether the file is up to date."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="exit 1 when the file differs, writing nothing"
        )
        parser.add_argument("--output", help=f"another file than {REFERENCE}")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["output"] or settings.BASE_DIR / REFERENCE)
        text = reference_markdown()
        if options["check"]:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                raise CommandError(
                    f"{path} is out of date: run `python manage.py settings_reference`"
                )
            self.stdout.write(f"{path} is up to date")
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.stdout.write(f"wrote {path}")
