"""No meter: time only, as hyperfine measures. Energy stays empty, and says so."""

from __future__ import annotations

import time

from wattzip.meters.base import Meter, Reading


class NoMeter(Meter):
    name = "none"
    scope = "none (time only)"
    method = "none"

    @classmethod
    def probe(cls, options):
        return None

    def start(self) -> None:
        self._t0 = time.monotonic()

    def stop(self) -> Reading:
        return Reading(None, [], self.name, self.scope, self.method, time.monotonic() - self._t0,
                       ["no energy meter: time only"])
