"""``python -m metrics``: see :mod:`metrics.cli`."""

from metrics.cli.app import main

raise SystemExit(main())
