from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "judging.api"
    label = "api"
    verbose_name = "REST API"
