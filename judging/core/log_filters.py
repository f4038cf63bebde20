"""Logging filters (``LOGGING`` in ``judging/settings.py``)."""

from __future__ import annotations

import logging


class ClientErrorsWithoutTraceback(logging.Filter):
    """A request refused or not found (a 4xx) is answered as planned: its warning names the
    status and the path, without the traceback of the ``PermissionDenied`` or ``Http404`` that
    Django attaches to it (one per refusal, and nothing in it to fix). A server error (5xx)
    keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
