"""Pooljudge for Python scripts: ``pooljudge.client`` talks to a running service over its REST
API (the service itself is the ``judging`` Django project over the ``metrics`` library)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pooljudge")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
