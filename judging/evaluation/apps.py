from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "judging.evaluation"
    label = "evaluation"
    verbose_name = "Evaluations and bias reports"

    def ready(self) -> None:
        from judging.evaluation import jobs  # noqa: F401 (registers its stored computations)
