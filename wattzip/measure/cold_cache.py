"""Cold caches before every run, warm tools: what a measured region starts from."""

from __future__ import annotations

from wattzip.machine import system
from wattzip.measure import runner
from wattzip.measure.job import MeasurementJob


class ColdCache:
    """Makes the caches cold before each run without making the tools cold.

    A target that is its own filesystem with the unmount flush is unmounted
    and mounted again (which empties its cache alone) and the inputs are
    evicted file by file. Otherwise the page cache is dropped globally when
    permitted; that also evicts the tools and their libraries, which are read
    back at once so that no run loads its tool from disk inside the region.
    Without permission, the job's own files are evicted one by one.
    """

    def __init__(self, job: MeasurementJob):
        self.job = job
        if job.duty:  # the shell loop's own tools
            writer = "dd" if job.copies_plainly else job.codec.binary
            argv0s = {"sh", "sync", "sleep", "timeout", writer}
        else:
            argv0s = {op.argvs[0][0] for op in (job.write_operation(), job.read_operation())}
        self.tool_files = sorted({f for a in argv0s for f in runner.tool_files(a)})

    def __call__(self) -> tuple[str, bool]:
        """(the method, whether the tools were read back) for the run's record."""
        job = self.job
        if job.medium.flush == "unmount":
            system.sync_filesystems([*job.sources(), job.medium.path])
            job.medium.cycle()
            # The inputs, and an emulated disk's image file, whose pages the host caches
            # below the loop device (the budget still sets the time; the bytes are cold).
            runner.evict([*job.sources(), *([job.medium.image] if job.medium.shares_budget
                                            else [])])
            return "unmount", False
        method = runner.drop_caches([*job.sources(), *job.stored_paths()])
        if method == "global":
            runner.warm(self.tool_files)
            return method, True
        return method, False
