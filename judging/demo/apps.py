from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "judging.demo"
    label = "demo"
    verbose_name = "Demo data"
