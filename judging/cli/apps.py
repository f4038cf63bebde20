from django.apps import AppConfig


class CliConfig(AppConfig):
    name = "judging.cli"
    label = "cli"
    verbose_name = "Management commands"
