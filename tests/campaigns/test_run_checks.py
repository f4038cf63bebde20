"""The content checksum of a submitted run: the same for the same rankings, whatever the
order of its topics; different when the same bytes are split differently between fields."""

from __future__ import annotations

import numpy as np

from judging.campaigns.run_checks import content_checksum


def test_the_content_checksum_ignores_topic_order_and_tells_topics_apart() -> None:
    a = ("401", b"d1\nd2", np.array([2.0, 1.0]).tobytes())
    b = ("402", b"d3", np.array([1.0]).tobytes())
    assert content_checksum([a, b]) == content_checksum([b, a])
    # the same bytes split differently between the fields are not the same content
    moved = ("401", b"d1\nd2d3", np.array([2.0, 1.0]).tobytes())
    assert content_checksum([a, b]) != content_checksum([moved, ("402", b"", b[2])])
