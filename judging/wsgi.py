"""WSGI entry point (gunicorn judging.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "judging.settings")
application = get_wsgi_application()
