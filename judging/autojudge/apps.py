from importlib import import_module

from django.apps import AppConfig


class AutojudgeConfig(AppConfig):
    name = "judging.autojudge"
    label = "autojudge"
    verbose_name = "Automatic judges"

    def ready(self) -> None:
        from judging.autojudge import labellers

        import_module("judging.autojudge.jobs")  # registers its stored computations
        labellers.register()
