from django.apps import AppConfig


class WorkflowsConfig(AppConfig):
    """No models: installed so that Celery finds ``tasks.py``."""

    name = "judging.workflows"
    label = "workflows"
    verbose_name = "Workflows"
