from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "judging.campaigns"
    label = "campaigns"
    verbose_name = "Campaigns, topics, documents and runs"
