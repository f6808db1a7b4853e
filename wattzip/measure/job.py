"""A measurement job: what it measures (a codec, or plain, on one input in one setting),
the operations it times, where it stores their output and how that output is verified.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shlex
from dataclasses import dataclass, field

from wattzip import records
from wattzip.analysis.stopping import RepeatRule, VerdictLooks
from wattzip.machine.emulated import EmulatedMachine
from wattzip.machine.media import Medium
from wattzip.measure import runner
from wattzip.measure.disturbance import DriftCheck, QuietLimits
from wattzip.measure.runner import Operation, sha256_of_command
from wattzip.meters.coefficients import Coefficients
from wattzip.resources import operations_where
from wattzip.workload import codec_registry
from wattzip.workload.codec_registry import Codec
from wattzip.workload.inputs import sha256_file


@dataclass(frozen=True)
class DutyCycle:
    """HPC '14's write phases between compute phases, measured as one run: K times,
    write the input (compressed or not) and flush it, then compute for S seconds,
    idle or busy on one core."""

    phases: int
    compute_s: float
    compute: str = "idle"  # or "busy"

    def __post_init__(self):
        # Typed as the job's key reads them: a config's `compute_s: 1` is the job 1.0 is.
        object.__setattr__(self, "phases", int(self.phases))
        object.__setattr__(self, "compute_s", float(self.compute_s))

    def compute_argv(self) -> str:
        if self.compute == "busy":
            return (f"timeout {self.compute_s:g} sh -c 'while :; do :; done'; "
                    "[ $? -eq 124 ] || exit 1")
        return f"sleep {self.compute_s:g}"


@dataclass
class MeasurementJob:
    """Everything one measurement job needs; `codec` None is the plain baseline."""

    testbed: str
    file_type: str
    input_path: str
    input_sha256: str
    input_bytes: int
    medium: Medium
    codec: Codec | None
    # How many runs (config repeats): the paper's rule, or the planned looks' least and most.
    repeats: RepeatRule
    factors: dict = field(default_factory=dict)
    copies: int = 1
    threads: int = 1
    idle_power_w: float | None = None
    # The idle mean's standard uncertainty (W) and its windows: the budget's idle term.
    idle_power_u_w: float | None = None
    idle_windows: int | None = None
    # A disk of a chosen speed: the target's and the input's devices capped (None: as is).
    bandwidth_bytes_per_s: int | None = None
    # The emulated machine's CPUs and memory (wattzip.machine.emulated; none: as is).
    machine: EmulatedMachine = field(default_factory=EmulatedMachine)
    trace_dir: str | None = None
    copy_buffer_bytes: int = runner.DEFAULT_COPY_BUFFER
    # Each copy reads its own input file (made outside the region); [input_path] for one.
    input_paths: list[str] = field(default_factory=list)
    duty: DutyCycle | None = None
    # The meter's identity (wattzip.meters.base.Meter.identity): part of the job's key.
    meter_identity: dict = field(default_factory=dict)
    # The estimate's coefficients on this machine (wattzip.meters.coefficients): every run
    # records what the model would say, so a real meter beside it checks the model.
    model: Coefficients | None = None
    # Verifications shared by every job of a testbed (JSONL), so that identical outputs in
    # other settings are decompressed once.
    verify_cache: str | None = None
    # The verdict design's stopping rule (a codec against its baseline); None: the paper's.
    looks: VerdictLooks | None = field(default=None, repr=False, compare=False)
    # How much of the machine others may use during a run (wattzip.measure.disturbance); None:
    # runs record the load but are not judged.
    quiet: QuietLimits | None = field(default=None, repr=False, compare=False)
    # The idle calibration's CPU package temperature (°C), the thermal gate's baseline
    # (QuietLimits.wait_until_cool); None: no sensor, or a calibration without one.
    idle_temp_c: float | None = field(default=None, repr=False, compare=False)
    # The reference operation before and after the job (wattzip.measure.drift); None: not checked.
    drift: DriftCheck | None = field(default=None, repr=False, compare=False)
    # Measured again after a drift: a new key, so its runs are measured afresh.
    epoch: int = 0
    # The codec's own cost measured too (config codec_only): its codec-only operations
    # after each repeat's write and read (data/operations.csv).
    codec_only: bool = False
    verification: str = field(default="", repr=False, compare=False)
    _verified_digests: set[str] = field(default_factory=set, repr=False, compare=False)

    def __post_init__(self) -> None:
        # SYSTOR '09's layout on an emulated disk: the input staged on the medium, its
        # reads and the output's writes through one budget (wattzip.machine.onedisk).
        if self.medium.inputs == "on-medium":
            self.medium.share_budget(self.bandwidth_bytes_per_s)

    @property
    def target_dir(self) -> str:
        return self.medium.path

    @property
    def codec_name(self) -> str:
        return self.codec.name if self.codec else "plain"

    @property
    def ops(self) -> tuple[str, ...]:
        if self.duty:
            return ("write-compute",)
        return operations_where(region="io", arm="codec" if self.codec else "plain")

    @property
    def codec_only_ops(self) -> tuple[str, ...]:
        """The codec-only operations this job measures beside its I/O ones: none for the
        plain baseline, a duty cycle, or a codec that cannot stream (Codec.streams)."""
        if not (self.codec_only and self.codec and self.codec.streams and not self.duty):
            return ()
        return operations_where(region="codec")

    def key(self) -> str:
        """Identifies runs that belong to this exact job (input, invocation, factors)."""
        argv = (list(self.codec.compress) + list(self.codec.decompress) if self.codec
                else runner.plain_copy_argv(self.copy_buffer_bytes))
        ident = {
            "testbed": self.testbed, "file_type": self.file_type, "sha": self.input_sha256,
            "codec": self.codec_name, "argv": argv, "factors": self.factors,
            "copies": self.copies, "threads": self.threads, "medium": self.medium.to_spec(),
            "meter": self.meter_identity,
        }
        if self.looks is not None:  # the verdict design's job holds its own plain arm
            ident["arms"] = ("codec, and pairs of its file type's shared plain arm"
                             if self.looks.plain_type else "plain and codec, interleaved")
        if self.machine.emulated:
            ident["machine"] = dataclasses.asdict(self.machine)
        if self.duty:
            ident["duty"] = vars(self.duty)
        if self.epoch:
            ident["epoch"] = self.epoch
        if self.codec_only_ops:
            ident["codec_only"] = True
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]

    def stored_paths(self) -> list[str]:
        suffix = self.codec.suffix if self.codec else ".raw"
        stem = f"wattzip-{self.file_type}-{self.codec_name}{suffix}"
        if self.duty:
            return [os.path.join(self.target_dir, f"{stem}.phase{k}")
                    for k in range(1, self.duty.phases + 1)]
        return [os.path.join(self.target_dir, f"{stem}.{i}" if self.copies > 1 else stem)
                for i in range(self.copies)]

    def sources(self) -> list[str]:
        return self.input_paths or [self.input_path] * self.copies

    @property
    def copies_plainly(self) -> bool:
        """Plain I/O moves the bytes: the baseline, and filesystem compression (the
        kernel compresses what the plain copy writes)."""
        return self.codec is None or bool(self.codec.filesystem)

    def duty_operation(self) -> Operation:
        """One shell loop: each phase writes the input, flushes it (sync FILE), computes.
        Its `>` opens each output by name, in the medium's folder, which attach() made sure
        only root can write (wattzip.machine.trust): no link of another user's is there."""
        q = shlex.quote
        source = self.sources()[0]  # the input where the job reads it (on the medium?)
        ok = "|".join(str(c) for c in sorted(self.codec.ok_exit_codes if self.codec else {0}))
        lines = []
        for path in self.stored_paths():
            if self.copies_plainly:
                writer = f"{shlex.join(runner.plain_copy_argv(self.copy_buffer_bytes))} " \
                         f"< {q(source)} > {q(path)}"
            elif self.codec.writes_out_path:
                writer = f"{shlex.join(self.codec.compress_argv(path, self.threads))} " \
                         f"< {q(source)}"
            else:
                writer = f"{shlex.join(self.codec.compress_argv(path, self.threads))} " \
                         f"< {q(source)} > {q(path)}"
            lines.append(f"{writer}; rc=$?; case $rc in {ok}) ;; *) exit $rc ;; esac; "
                         f"sync {q(path)} || exit 1; {self.duty.compute_argv()}")
        return Operation("write-compute", [["sh", "-c", "\n".join(lines)]], [os.devnull],
                         [None])

    def write_operation(self) -> Operation:
        if self.duty:
            return self.duty_operation()
        stored = self.stored_paths()
        unmount = self.medium if self.medium.flush == "unmount" else None
        if self.copies_plainly:
            argvs = [runner.plain_copy_argv(self.copy_buffer_bytes) for _ in stored]
            return Operation(self.ops[0], argvs, self.sources(), stored, stored,
                             unmount=unmount)
        c = self.codec
        argvs = [c.compress_argv(p, self.threads) for p in stored]
        stdouts = [None] * self.copies if c.writes_out_path else stored
        return Operation("compress-write", argvs, self.sources(), stdouts, stored,
                         c.ok_exit_codes, unmount=unmount)

    def read_operation(self) -> Operation:
        stored = self.stored_paths()
        if self.copies_plainly:
            argvs = [runner.plain_copy_argv(self.copy_buffer_bytes) for _ in stored]
            return Operation(self.ops[1], argvs, stored, [None] * self.copies)
        c = self.codec
        argvs = [c.decompress_argv(p, self.threads) for p in stored]
        stdins = [os.devnull] * self.copies if c.reads_in_path else stored
        return Operation("decompress-read", argvs, stdins, [None] * self.copies)

    def codec_only_operations(self) -> list[Operation]:
        """The codec alone (SYSTOR '09's operations without their I/O): the input
        compressed, then the stored file decompressed, each read from the page cache
        (read in outside the region: wattzip.measure.repeats) and written to /dev/null,
        no flush. The
        input is the one in the input folder, every copy's (a copy staged on an emulated
        disk would be read through its budget)."""
        if not self.codec_only_ops:
            return []
        c, stored = self.codec, self.stored_paths()
        write, read = self.codec_only_ops
        return [Operation(write, [c.compress_argv(os.devnull, self.threads) for _ in stored],
                          [self.input_path] * self.copies, [None] * self.copies,
                          ok_exit_codes=c.ok_exit_codes),
                Operation(read, [c.decompress_argv(p, self.threads) for p in stored],
                          [os.devnull] * self.copies if c.reads_in_path else stored,
                          [None] * self.copies)]

    def verify(self) -> tuple[bool, str]:
        """Does every stored file give back the original bytes? (outside the region)

        A file whose own sha256 equals that of a file already shown to decompress to
        the input is the same bytes, so it is verified without decompressing again:
        deterministic tools repeat their output, and the slow decompressors (PPMd)
        would otherwise double the study's time. With a verification cache this holds
        across jobs and settings too (`verify_cache`, keyed by the codec's command,
        its version and the input's sha256); `self.verification` says how.
        """
        how = set()
        for path in self.stored_paths():
            stored_digest = sha256_file(path)
            if stored_digest in self._verified_digests:
                how.add("identical bytes verified earlier in this job")
                continue
            cached = self._cached_verification(stored_digest)
            if cached:
                how.add(f"identical bytes verified by job {cached}")
                self._verified_digests.add(stored_digest)
                continue
            if self.copies_plainly:
                ok = stored_digest == self.input_sha256
                if not ok:
                    return False, f"{path}: written bytes differ from the input (sha256 mismatch)"
                how.add("sha256 of the copy")
            else:
                argv = self.codec.decompress_argv(path, self.threads)
                stdin = None if self.codec.reads_in_path else path
                digest, _, why = sha256_of_command(argv, stdin)
                if digest is None:
                    return False, f"{path}: decompression failed ({why})"
                if digest != self.input_sha256:
                    return False, (f"{path}: decompressed bytes differ from the input "
                                   "(sha256 mismatch)")
                how.add("decompressed")
                if self.verify_cache:
                    records.append_journal(self.verify_cache, {
                        "key": self._verification_key(), "output_sha256": stored_digest,
                        "job_key": self.key()})
            self._verified_digests.add(stored_digest)
        self.verification = "; ".join(sorted(how))
        return True, ""

    def _verification_key(self) -> str:
        """What makes two outputs' verification the same: the codec's commands, the tool's
        version and the input's bytes (not the medium, the setting or the meter)."""
        ident = {"compress": list(self.codec.compress), "decompress": list(self.codec.decompress),
                 "version": codec_registry.version(self.codec), "input": self.input_sha256}
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]

    def _cached_verification(self, output_sha256: str) -> str | None:
        """The job that already decompressed these very bytes to the input, if any."""
        if not self.verify_cache or self.copies_plainly:
            return None
        key = self._verification_key()
        for entry in records.read_journal(self.verify_cache, None, ("key", "output_sha256")):
            if entry["key"] == key and entry["output_sha256"] == output_sha256:
                return entry["job_key"]
        return None
