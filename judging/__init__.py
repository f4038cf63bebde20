"""The Pooljudge Django project: settings, URLs, the Celery app and the apps."""

from judging.celery import app as celery_app

__all__ = ["celery_app"]
