from django.apps import AppConfig


class PoolsConfig(AppConfig):
    name = "judging.pools"
    label = "pools"
    verbose_name = "Pools"
