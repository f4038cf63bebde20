from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "judging.web"
    label = "web"
    verbose_name = "Browser pages"
