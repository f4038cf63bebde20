from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "judging.evaluation"
    label = "evaluation"
    verbose_name = "Evaluations and bias reports"
