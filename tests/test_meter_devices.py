"""A meter names the device it reads, and reads it alone.

Each run carries its meter's identity (runs.csv's meter_identity), so a serial port, a
BMC or a logger's file is part of it: two meters of one kind are two identities. A
serial meter's records each reach one reader, so another process holding the port is
refused, and none can open it while a job reads it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from wattzip import machine, meters
from wattzip.errors import ConfigError, MeterError
from wattzip.meters import ipmi, wattsup
from wattzip.model import checks

from .test_meter_edges import FakeWattsUp, fake_ipmitool

NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


def test_a_port_another_process_holds_open_is_refused_before_a_byte_is_sent():
    device = FakeWattsUp(before_w=80.0, after_w=80.0, step_s=0.0)
    with open(device.port, "rb", buffering=0) as port:
        reader = subprocess.Popen(["sleep", "60"], stdin=port)
    try:
        with machine.session("test"):
            meter = meters.WattsUpMeter(meters.MeterOptions(wattsup_port=device.port))
            with pytest.raises(MeterError, match=f"open in process {reader.pid}"):
                meter.start()
            meter.close()
        assert not [e for e in machine.pending() if e["kind"] == "serial"]
    finally:
        reader.kill()
        reader.wait()
        device.close()
    assert device.received == []


def test_while_the_meter_reads_its_port_no_other_process_opens_it():
    """flock for another wattzip or pyserial (exclusive=True), TIOCEXCL for every other
    user's process (root alone may still open a tty in exclusive mode)."""
    device = FakeWattsUp(before_w=80.0, after_w=80.0, step_s=0.0)
    os.chmod(device.port, 0o666)  # as a port a group of users may read
    lock = ("import fcntl, sys\n"
            "f = open(sys.argv[1], 'rb', buffering=0)\n"
            "fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n")
    try:
        with machine.session("test"):
            meter = meters.WattsUpMeter(meters.MeterOptions(wattsup_port=device.port))
            meter.start()
            second = subprocess.run([sys.executable, "-c", lock, device.port],
                                    capture_output=True, text=True, check=False)
            other_user = subprocess.run(
                [*NOBODY, "/usr/bin/python3", "-c", "import sys; open(sys.argv[1], 'rb')",
                 device.port], capture_output=True, text=True, check=False)
            time.sleep(0.2)
            meter.stop()
            meter.close()
        after = subprocess.run([*NOBODY, "/usr/bin/python3", "-c",
                                "import sys; open(sys.argv[1], 'rb')", device.port],
                               capture_output=True, text=True, check=False)
    finally:
        device.close()
    assert second.returncode != 0 and "BlockingIOError" in second.stderr
    assert other_user.returncode != 0 and "Device or resource busy" in other_user.stderr
    assert after.returncode == 0, after.stderr  # closed: the port is anyone's again


def test_a_serial_meter_s_identity_names_its_port_and_device(tmp_path):
    device = FakeWattsUp(before_w=80.0, after_w=80.0, step_s=0.0)
    link = tmp_path / "wattsup"
    link.symlink_to(device.port)
    try:
        ident = meters.WattsUpMeter(meters.MeterOptions(wattsup_port=str(link))).identity()
    finally:
        device.close()
    # As configured, and the adapter's serial-number names (a pty has none): the ttyUSB
    # it resolves to now may be another meter's after a replug.
    assert ident["device"] == {"port": str(link), "by_id": []}


@pytest.mark.parametrize("glued", [False, True], ids=["-H-host", "-Hhost"])
def test_a_bmc_s_identity_names_its_host_and_never_its_password(tmp_path, glued):
    tool, _ = fake_ipmitool(tmp_path)
    remote = (str(tool), "-I", "lanplus", "-H", "bmc-7.example", "-U", "admin",
              "-P", "s3cret", "dcmi", "power", "reading")
    if glued:  # as ipmitool also reads them
        remote = (str(tool), "-I", "lanplus", "-Hbmc-7.example", "-Uadmin", "-Ps3cret",
                  "dcmi", "power", "reading")
    ident = meters.IpmiMeter(meters.MeterOptions(ipmi_command=remote)).identity()
    local = meters.IpmiMeter(meters.MeterOptions(ipmi_command=(str(tool), "dcmi", "power",
                                                                "reading"))).identity()
    assert ident["device"]["bmc"] == "bmc-7.example" and local["device"]["bmc"] == "local"
    assert "s3cret" not in json.dumps(ident) and "admin" not in json.dumps(ident)
    shown = ipmi.shown_command(remote)  # as a BMC that does not answer is named
    assert "bmc-7.example" in shown and "s3cret" not in shown and "admin" not in shown
    assert meters.base.identity_id(ident) != meters.base.identity_id(local)


@pytest.mark.parametrize("secret", ["-P s3cret", "-Ps3cret", "-k s3cret", "-y 5e3c",
                                    # bundled, as ipmitool's getopt reads them
                                    "-vPs3cret", "-vvP s3cret", "-EP s3cret", "-vk s3cret",
                                    "-cvy5e3c"])
def test_a_password_on_the_bmc_s_command_line_is_refused_before_anything_runs(secret):
    """ps shows every user each query's words, and each job's spec holds the config."""
    config = {"order": ["ipmi"], "require_measured": True,
              "ipmi_command": f"ipmitool -I lanplus -H bmc-7 -U admin {secret} dcmi power reading"}
    with pytest.raises(ConfigError, match="-f FILE") as refused:
        meters.options_of(config)
    assert "5e3c" not in str(refused.value) and "s3cret" not in str(refused.value)
    [problem] = checks.meter_problems("server", config)  # the rehearsal's and pre-flight's
    assert problem.startswith("testbed server: meter.ipmi_command: ipmi: the command")
    from_file = {**config, "ipmi_command": "ipmitool -H bmc-7 -U admin -f /root/bmc.pw dcmi "
                                          "power reading"}
    assert meters.options_of(from_file).ipmi_command[-3:] == ("dcmi", "power", "reading")
    assert checks.meter_problems("server", from_file) == []


def test_a_trace_s_identity_names_its_file_and_the_user_who_can_write_it(tmp_path):
    log = tmp_path / "power.csv"
    log.write_text("timestamp,watts\n")
    os.chown(log, 65534, 65534)
    ident = meters.TraceMeter(meters.MeterOptions(trace_path=str(log))).identity()
    assert ident["device"] == {"trace": str(log), "owner_uid": 65534}


def test_a_file_that_is_no_power_log_is_refused_without_quoting_it(tmp_path):
    """The path may be a link another user planted to a file only root can read; the
    refusal lands in provenance.json."""
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$hash-of-root:19000:0:99999:7:::\n")
    said = meters.TraceMeter.probe(meters.MeterOptions(trace_path=str(secret)))
    assert "does not name the columns timestamp,watts" in said
    assert "hash-of-root" not in said


def test_idle_power_of_another_device_is_not_subtracted(tmp_path):
    """Two loggers' files: the same kind and scope, another device."""
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    for log in (first, second):
        log.write_text("timestamp,watts\n")
    by_first = meters.TraceMeter(meters.MeterOptions(trace_path=str(first)))
    by_second = meters.TraceMeter(meters.MeterOptions(trace_path=str(second)))
    idle = {"meter_source": "trace", "meter_scope": "wall",
            "meter_identity": json.loads(json.dumps(by_first.identity()))}
    meters.check_same_meter(idle, by_first, "idle/s.json")
    with pytest.raises(MeterError, match="another device's idle power"):
        meters.check_same_meter(idle, by_second, "idle/s.json")


def test_a_port_unplugged_while_open_is_closed_all_the_same(monkeypatch):
    """The kernel hangs up an unplugged adapter's tty: every ioctl on it fails (EIO)."""
    device = FakeWattsUp(before_w=80.0, after_w=80.0, step_s=0.0)
    try:
        with machine.session("test"):
            meter = meters.WattsUpMeter(meters.MeterOptions(wattsup_port=device.port))
            meter.start()
            meter.stop()
            port = meter._port

            def hung_up(fd, request, *args):
                raise OSError(5, "Input/output error")

            monkeypatch.setattr(wattsup.fcntl, "ioctl", hung_up)
            meter.close()
    finally:
        device.close()
    assert meter._port is None and not port.is_open


def test_the_provenance_table_names_the_meter_s_device():
    from wattzip.machine import system

    meter = {"source": "wattsup", "scope": "wall", "method": "measured",
             "device": {"port": "/dev/ttyUSB0", "by_id": []}}
    rows = {r["key"]: r["value"] for r in system.provenance_rows({"meter": meter})}
    assert rows["energy meter"] == "wattsup (/dev/ttyUSB0), scope wall, measured"
    model = {"source": "model", "scope": "cpu", "method": "estimated", "device": None}
    rows = {r["key"]: r["value"] for r in system.provenance_rows({"meter": model})}
    assert rows["energy meter"] == "model, scope cpu, estimated"


@pytest.mark.parametrize(("words", "shown"), [
    (["-vPs3cret"], "-vP***"), (["-vvP", "s3cret"], "-vvP ***"), (["-EU", "admin"], "-EU ***"),
    (["-cHbmc-7"], "-cHbmc-7"), (["-v", "--", "-Ps3cret"], "-v -- -Ps3cret")])
def test_bundled_options_are_read_as_getopt_reads_them(words, shown):
    """A secret bundled after a flag that takes none is masked; `--` ends the options."""
    command = ["ipmitool", *words, "dcmi", "power", "reading"]
    assert ipmi.shown_command(command) == f"ipmitool {shown} dcmi power reading"
