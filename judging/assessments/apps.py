from django.apps import AppConfig


class AssessmentsConfig(AppConfig):
    name = "judging.assessments"
    label = "assessments"
    verbose_name = "Judgments and qrels versions"
