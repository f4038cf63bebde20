"""``python -m metrics``: the command line; :func:`metrics.cli.app.main` is the entry point.

Each subcommand registers itself with the parser built in :mod:`metrics.cli.app`; a subcommand
whose module is heavy (scipy, the bias analyses) is imported only when it is asked for.
"""
