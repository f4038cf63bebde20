"""Peak resident memory of the current process, for the benchmarks' child processes."""

from __future__ import annotations

import resource


def peak_rss_mb() -> float:
    """This program's peak resident memory in MB.

    ``ru_maxrss`` would do, except that on Linux it keeps the peak of the forked copy of the
    parent from before ``exec``: a benchmark whose parent built a large input would see every
    child report at least the parent's size. ``VmHWM`` belongs to this program alone.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
