"""Give a workflow the parameters of the service it wraps, for type checkers and readers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def takes_arguments_of(service: Callable[P, Any]) -> Callable[[Callable[..., R]], Callable[P, R]]:
    """``@takes_arguments_of(run_submit)`` on ``def run_submitted(**kw) -> Run``: callers are
    checked against ``run_submit``'s keyword arguments, without writing them out twice."""

    def keep(workflow: Callable[..., R]) -> Callable[P, R]:
        return workflow

    return keep
