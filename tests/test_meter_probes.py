"""`wattzip meters` says why a meter is unusable in the user's own terms: what was given,
and what is wrong with it, before anything is measured."""

from __future__ import annotations

import subprocess
import sys

import pytest

from wattzip import meters
from wattzip.errors import MeterError

pytestmark = pytest.mark.pure


def probe(name: str, **given) -> str | None:
    return meters.METERS[name].probe(meters.MeterOptions(**given))


def test_a_trace_must_be_a_power_log_in_a_zone_that_is_one(tmp_path):
    log = tmp_path / "power.csv"
    log.write_text("timestamp,watts\n")
    assert probe("trace", trace_path=str(log)) is None
    (tmp_path / "later.csv").write_text("")  # its logger has not written the header yet
    assert probe("trace", trace_path=str(tmp_path / "later.csv")) is None
    assert "is not a file" in probe("trace", trace_path=str(tmp_path))
    (tmp_path / "x.json").write_text('{"a": 1}\n')
    assert "is not a power log" in probe("trace", trace_path=str(tmp_path / "x.json"))
    said = probe("trace", trace_path=str(log), trace_timezone="Mars/Base")
    assert "'Mars/Base' is not an IANA zone name" in said
    with pytest.raises(MeterError, match="Mars"):  # refused on opening, not after a run
        meters.open_meter({"order": ["trace"], "trace_path": str(log),
                           "trace_timezone": "Mars/Base"})


def test_a_trace_deleted_during_a_run_is_a_meter_error(tmp_path):
    from wattzip.meters.trace import read_power_trace

    with pytest.raises(MeterError, match="cannot read"):
        read_power_trace(str(tmp_path / "rotated.csv"))


def test_powercap_root_and_ipmi_command_name_what_was_given(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(MeterError, match="is not a folder"):
        meters.open_meter({"order": ["powercap"], "powercap_root": str(tmp_path / "afile")})
    said = probe("ipmi", ipmi_command=("/nonexistent/read-power",))
    assert "the command given to read power, is not found" in said
    assert "apt-get" not in said
    assert "is empty" in probe("ipmi", ipmi_command=())


def test_meters_refuses_a_meter_that_is_none():
    out = subprocess.run([sys.executable, "-m", "wattzip", "meters", "--meter", "nosuch"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "unknown meter 'nosuch'" in out.stderr


def test_a_wattsup_port_must_be_a_serial_device(tmp_path):
    (tmp_path / "log.txt").write_text("")
    for given in (tmp_path, tmp_path / "log.txt"):
        assert "is not a serial port" in probe("wattsup", wattsup_port=str(given))
    assert "does not exist" in probe("wattsup", wattsup_port=str(tmp_path / "ttyUSB9"))
    said = probe("wattsup", wattsup_port="/dev/null")  # a character device: it may be one
    assert said is None or "pyserial" in said
