"""Topic set size design (``metrics.stats.topicset``): the variance estimates by hand, and the
topics it asks for checked by simulation: with n topics the Student interval's mean width is
within the target, with n - 1 it is not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import t as student

from metrics.stats.topicset import (
    expected_width,
    residual_variance,
    score_variance,
    topics_for_width,
)


def test_variances_by_hand() -> None:
    # 2 systems x 3 topics; system means 0.2, 0.4; topic means 0.25, 0.35, 0.3; grand 0.3
    x = [[0.1, 0.3, 0.2], [0.4, 0.4, 0.4]]
    # residuals: x - row - col + grand
    r = np.array(x) - [[0.2], [0.4]] - [0.25, 0.35, 0.3] + 0.3
    assert residual_variance(x) == pytest.approx((r**2).sum() / 2)
    assert score_variance(x) == pytest.approx((0.01 + 0.01 + 0) / 4)
    with pytest.raises(ValueError, match="at least 2 x 2"):
        residual_variance([[0.1, 0.2]])


@pytest.mark.parametrize(("sigma", "width"), [(0.2, 0.1), (0.1, 0.05), (0.3, 0.2)])
def test_the_topics_asked_for_give_the_width_by_simulation(sigma: float, width: float) -> None:
    n = topics_for_width(sigma**2, width, what="mean")
    rng = np.random.default_rng(3)

    def mean_width(k: int) -> float:
        s = rng.normal(0.0, sigma, size=(20_000, k)).std(axis=1, ddof=1)
        return float((2 * student.ppf(0.975, k - 1) * s / np.sqrt(k)).mean())

    assert mean_width(n) <= width * 1.01
    assert mean_width(n - 1) > width * 0.99
    assert expected_width(n, sigma**2) <= width < expected_width(n - 1, sigma**2)


def test_a_difference_doubles_the_variance() -> None:
    assert topics_for_width(0.02, 0.1) == topics_for_width(0.04, 0.1, what="mean")
    assert topics_for_width(0.0, 0.1) == 2
