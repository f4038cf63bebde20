from django.apps import AppConfig


class AutojudgeConfig(AppConfig):
    name = "judging.autojudge"
    label = "autojudge"
    verbose_name = "Automatic judges"

    def ready(self) -> None:
        from judging.autojudge import jobs, labellers

        del jobs  # imported for its registry entries (its stored computations)
        labellers.register()
