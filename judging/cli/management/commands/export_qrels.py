from __future__ import annotations

import os
import zipfile
from pathlib import Path
from tempfile import TemporaryFile
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.assessments.beir_export import write_beir_zip
from judging.assessments.models import QrelsVersion
from judging.assessments.selectors import qrels_version
from judging.assessments.services import qrels_export_lines
from judging.cli.management.commands._common import (
    add_campaign_argument,
    as_command_error,
    get_campaign,
)
from judging.core.errors import DomainError


class Command(BaseCommand):
    help = (
        "Export a qrels version of a campaign in TREC format (qid 0 docid grade), sorted by "
        "topic and document: the exact bytes its content hash is taken over."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # --version names the qrels version here: let it replace Django's built-in --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        add_campaign_argument(parser)
        parser.add_argument(
            "--version", type=int, default=None, help="Version number (default: the latest)."
        )
        parser.add_argument("-o", "--output", default="-", help="File to write (default: stdout).")
        parser.add_argument(
            "--format",
            default=None,
            help="A sampled version: sample_eval (default), trec (trec_eval's -1 form, one "
            "stratum only) or prels (each document's inclusion probability). A complete "
            "version: trec (default) or beir: the campaign's golden set in BEIR's layout "
            "(corpus.jsonl, queries.jsonl, qrels/test.tsv, pooljudge.json), to -o as a zip, or "
            "unpacked into -o when it is a folder (an existing one, or a path ending in /).",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = get_campaign(opts["campaign"])
        version = qrels_version(campaign, opts["version"])
        if version is None and opts["version"] is None:
            raise CommandError(f"campaign {campaign.name!r} has no qrels version yet")
        if version is None:
            raise CommandError(f"campaign {campaign.name!r} has no qrels version {opts['version']}")
        if opts["format"] == "beir":
            self._beir(version, opts["output"])
            return
        try:
            lines = qrels_export_lines(version, opts["format"])
        except DomainError as exc:  # the rows no longer hash to the stored hash; a bad format
            raise as_command_error(exc) from None
        if opts["output"] == "-":
            for line in lines:
                self.stdout.write(line, ending="")
            return
        with Path(opts["output"]).open("w", encoding="utf-8", newline="\n") as out:
            out.writelines(lines)
        self.stderr.write(
            f"qrels version {version.number}: {version.num_judgments} judgments written to "
            f"{opts['output']} (sha256 {version.content_hash[:12]})"
        )

    def _beir(self, version: QrelsVersion, output: str) -> None:
        if output == "-":
            raise CommandError("--format beir writes a zip or a folder: give it with -o")
        unpack = output.endswith(("/", os.sep)) or Path(output).is_dir()
        try:
            if unpack:
                with TemporaryFile() as spool:
                    meta = write_beir_zip(version, spool)
                    Path(output).mkdir(parents=True, exist_ok=True)
                    with zipfile.ZipFile(spool) as archive:
                        archive.extractall(output)
            else:  # written beside, then renamed: a refusal leaves no empty or partial zip
                part = Path(f"{output}.part")
                try:
                    with part.open("wb") as out:
                        meta = write_beir_zip(version, out)
                    part.replace(output)
                finally:
                    part.unlink(missing_ok=True)
        except DomainError as exc:  # a sampled version; rows that fail their hash
            raise as_command_error(exc) from None
        self.stderr.write(
            f"qrels version {version.number}: {meta['qrels']['judgments']} judgments, the "
            f"corpus and queries written to {output} in BEIR's layout (sha256 "
            f"{version.content_hash[:12]})"
        )
