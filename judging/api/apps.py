from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "judging.api"
    label = "api"
    verbose_name = "REST API"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import pre_save

        from judging.api.authentication import revoke_on_password_change

        pre_save.connect(
            revoke_on_password_change, sender=get_user_model(), dispatch_uid="pooljudge-token"
        )
