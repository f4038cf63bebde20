from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "judging.core"
    label = "core"
    verbose_name = "Pooljudge core"
