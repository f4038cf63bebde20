"""Command line: ``python -m metrics evaluate|compare ...``.

    python -m metrics evaluate QRELS RUN [RUN ...] [-m MEASURE ...] [-q] [--compat trec_eval]
                                [-c] [-l LEVEL] [-M N] [-J] [-N N] [-n] [-Z ZSCORES]
                                [-R qrels|qrels_jg|prefs|qrels_prefs] [--format trec|json|csv]
                                [--max-line-length N]
    python -m metrics compare QRELS RUN RUN [...] -m MEASURE [--test t|randomization|bootstrap]
    python -m metrics diversity SUBTOPIC_QRELS RUN [RUN ...] [-m alpha-nDCG@20 ...]
    python -m metrics check QRELS RUN --baseline BASE_RUN -m MEASURE [...] --max-drop X

Exit codes: 0 ok, 2 usage, 3 bad input file (file, line and problem on stderr), 4 unknown measure;
``check`` also 1, a regression found (:mod:`metrics.cli.check`). A run or qrels line over
``--max-line-length`` bytes (default 65536, the readers' own; 0: no limit) is a bad input file.

``--compat trec_eval --format trec`` is trec_eval 10.0's output byte for byte: its flags (``-q
-c -l -M -J -N -n -Z -R qrels_jg|prefs|qrels_prefs``; ``-m`` with its names, parameters and
nicknames ``official`` (the default there), ``all_trec``, ``set``, ``qrels_jg``, ``all_prefs``,
``prefs`` (the default with ``-R prefs``)), its measure order with cutoffs ascending whatever
order they were asked in, each measure once with the first parameters given for it, ``runid``
and ``num_q`` where it prints them, its rounding (means summed left to right).

``--format trec`` prints ``measure<TAB>query<TAB>value`` lines like trec_eval (measure names
padded to 22 characters; ``all`` for the aggregate; floats with 4 decimals, counts as integers;
per-query lines, with ``-q``, first, queries in byte order; no confidence intervals, which are
computed only for the formats that print them). A measure asked for in trec_eval
spelling is printed in that spelling (``P_10``, ``map``), one asked for as ``nDCG@10`` is printed
so. In the honest mode measures print in the order asked, and with several runs each run's
block starts with trec_eval's ``runid  all  TAG`` line. In the
honest mode the companions (``Judged@k``, ``ceiling@k``) and the treatments
(``P@10:condensed``, ``P@10:upper``) follow as extra lines, and a summary of the mode, averaging
and excluded queries goes to stderr, so stdout stays parseable. json and csv carry everything:
run tag, mode, averaging, confidence intervals, excluded queries.

What a run file holds that is accepted although unusual (NaN or infinite scores, fields after the
sixth; see :mod:`metrics.io.trec`) is said on stderr, one line per kind with its count and first
lines: ``run.txt: warning: 3 lines with a NaN score (...): lines 5998, 5999, 6000``.

Subcommands are registered by the callables in :data:`SUBCOMMANDS`: each gets the argparse
subparsers object, adds its parser and sets ``func(args, out) -> int`` as its default.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from metrics.cli.compare import register_compare
from metrics.cli.evaluate import (
    EXIT_INPUT,
    EXIT_MEASURE,
    EXIT_OK,
    EXIT_USAGE,
    register_evaluate,
)
from metrics.io import InvalidInput
from metrics.measures.names import (
    UnknownMeasureError,
)

__all__ = [
    "SUBCOMMANDS",
    "build_parser",
    "main",
]

Register = Callable[[Any], None]


class _Lazy:
    """The ``register`` of a subcommand module, imported only when its command is parsed: a
    call of ``evaluate`` does not pay for loading pooling, bias or diversity code."""

    def __init__(self, command: str, module: str) -> None:
        self.command = command
        self.module = module

    def __call__(self, subparsers: Any) -> None:
        import importlib

        importlib.import_module(self.module).register(subparsers)

    def __repr__(self) -> str:
        return f"<register {self.command} from {self.module}>"


SUBCOMMANDS: list[Register] = [
    register_evaluate,
    register_compare,
    # Other subcommands register here: one callable per command, taking the argparse
    # subparsers object and setting ``func(args, out) -> int`` as its default (a ``_Lazy``
    # imports its module only when that command is run or help is asked).
    _Lazy("pool", "metrics.cli.pool"),  # pool build / simulate
    _Lazy("bias", "metrics.cli.bias"),  # bias: leave-one-run/group-out, estimators, ...
    _Lazy("diversity", "metrics.cli.diversity"),  # alpha-nDCG, ERR-IA, P-IA, strec
    _Lazy("check", "metrics.cli.check"),  # regression check against a baseline (exit 1: fail)
]


_COMMANDS = {"evaluate": register_evaluate, "compare": register_compare}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``python -m metrics`` parser with every registered subcommand (only ``command``'s,
    when it names one: the others are not imported)."""
    parser = argparse.ArgumentParser(
        prog="python -m metrics",
        description="Pooljudge metrics: evaluate TREC runs honestly, or exactly like trec_eval.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    named = [r for r in SUBCOMMANDS if _command_of(r) == command]
    for register in named or SUBCOMMANDS:
        register(sub)
    return parser


def _command_of(register: Register) -> str | None:
    if isinstance(register, _Lazy):
        return register.command
    return next((c for c, r in _COMMANDS.items() if r is register), None)


def _bias_cli() -> Any:
    from metrics.cli import bias as bias_cli

    return bias_cli


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 usage, 3 bad input, 4 unknown measure)."""
    words = list(sys.argv[1:] if argv is None else argv)
    stream = out if out is not None else sys.stdout
    bias_cli = _bias_cli() if words[:1] == ["bias"] else None
    if bias_cli is not None and len(words) >= 2 and words[1] in bias_cli.SUBCOMMANDS:
        # ``bias estimators|compare|reusability ...`` parse their own options
        prog = f"python -m metrics bias {words[1]}"

        def command() -> int:
            code: int = bias_cli.dispatch(words[1:], stream)
            return code

    else:
        parser = build_parser(words[0] if words else None)
        try:
            args = parser.parse_args(words)
        except SystemExit as exc:  # argparse: usage error (2) or --help (0)
            return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
        prog = f"{parser.prog} {args.command}"

        def command() -> int:
            code: int = args.func(args, stream)
            return code

    try:
        return command()
    except InvalidInput as exc:
        lines = [
            f"{prog}: error: {exc.source} line {p.line}: {p.message}"
            if p.line
            else f"{prog}: error: {exc.source}: {p.message}"
            for p in exc.problems
        ]
        if exc.total > len(exc.problems):
            lines.append(f"{prog}: error: ... and {exc.total - len(exc.problems)} more problems")
        print("\n".join(lines), file=sys.stderr)
        return EXIT_INPUT
    except UnknownMeasureError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_MEASURE
    except BrokenPipeError:  # stdout closed early (``| head``): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:
        print(f"{prog}: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_INPUT
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
