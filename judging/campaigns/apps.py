from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "judging.campaigns"
    label = "campaigns"
    verbose_name = "Campaigns, topics, documents and runs"

    def ready(self) -> None:
        from judging.campaigns import checks  # noqa: F401  (registers the system check)
