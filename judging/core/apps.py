from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "judging.core"
    label = "core"
    verbose_name = "Pooljudge core"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in, user_login_failed

        from judging.core import checks, login_throttle

        checks.register()
        user_login_failed.connect(login_throttle.on_login_failed, dispatch_uid="pooljudge-login")
        user_logged_in.connect(login_throttle.on_logged_in, dispatch_uid="pooljudge-login")

        from judging.core import outbox

        outbox.connect()  # workers (and inline tasks) mark their outbox rows started and done
