from django.apps import AppConfig


class AutojudgeConfig(AppConfig):
    name = "judging.autojudge"
    label = "autojudge"
    verbose_name = "Automatic judges"
