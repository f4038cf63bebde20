# Pooljudge production image: gunicorn for the web, the same image runs the Celery worker.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    POOLJUDGE_VAR_DIR=/var/lib/pooljudge DJANGO_STATIC_ROOT=/srv/static
WORKDIR /srv/pooljudge

COPY pyproject.toml README.md ./
COPY metrics ./metrics
COPY judging ./judging
COPY templates ./templates
COPY manage.py ./
RUN pip install . && useradd --system --home /srv/pooljudge pooljudge \
    && mkdir -p /var/lib/pooljudge /srv/static && chown pooljudge /var/lib/pooljudge /srv/static

USER pooljudge
# collectstatic needs settings that load: give it a throwaway key at build time only.
RUN DJANGO_SECRET_KEY=build-only-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n') \
    DJANGO_ALLOWED_HOSTS=build DJANGO_DEBUG=0 python manage.py collectstatic --noinput -v 0

EXPOSE 8000
CMD ["gunicorn", "judging.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4", \
     "--timeout", "120", "--access-logfile", "-"]
