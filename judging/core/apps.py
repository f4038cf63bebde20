from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "judging.core"
    label = "core"
    verbose_name = "Pooljudge core"

    def ready(self) -> None:
        from judging.core import outbox

        outbox.connect()  # workers (and inline tasks) mark their outbox rows started and done
