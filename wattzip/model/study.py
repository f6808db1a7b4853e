"""The study's design, defined once: testbeds, settings, jobs and the primary setting.

Every rule, script, table and the report reads the design from here (or from
the tables it labels: one column per factor and a `primary` flag); none of them
rebuilds it, parses a setting's name or picks a setting by sorting. The
schema's `default:` values are the only defaults.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

from wattzip import units
from wattzip.analysis.analysis_options import AnalysisOptions
from wattzip.analysis.claims import load_claims
from wattzip.analysis.claims.registry import kinds_read
from wattzip.analysis.stopping import METRICS as JUDGED_METRICS
from wattzip.analysis.stopping import RepeatRule
from wattzip.errors import ConfigError
from wattzip.machine import throttle
from wattzip.machine.emulated import EmulatedMachine
from wattzip.measure import spec as specs
from wattzip.measure.idle import first_look
from wattzip.model.config import merge_configs, validate, with_defaults
from wattzip.model.jobs import RESULTS, STAGES, Job
from wattzip.model.scope import CellScope
from wattzip.model.testbed import FACTORS, DutyCycleWorkload, Setting, Testbed, medium_fields
from wattzip.workload import codec_registry

# Keys of a paper's setup overlay that name places, not the setup (Study.departures).
PLACES = ("study", "testbed", "testbeds", "target_dir", "input_dir", "paper_setup")
MEDIUM_PLACES = ("path", "image", "device")
_ABSENT = object()


def _leaves(tree: dict, prefix: str = "") -> list[tuple[str, object]]:
    """A config's values by dotted key, mappings walked into, lists taken whole."""
    out = []
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out += _leaves(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _at(config: dict, key: str):
    for part in key.split("."):
        if not isinstance(config, dict) or part not in config:
            return _ABSENT
        config = config[part]
    return config


def _shown(value) -> str:
    if value is _ABSENT:
        return "left out"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return "null" if value is None else str(value).lower() if isinstance(value, bool) \
        else str(value)


class Study:
    """The merged, validated config as one typed object."""

    def __init__(self, config: dict):
        self.config = with_defaults(config)
        c = self.config
        self.name = c["study"]["name"]
        self.description = c["study"].get("description", "")
        self.testbeds = self._testbeds()
        self.file_types = list(c["file_types"])
        try:
            self.codecs = [x.name for x in codec_registry.resolve(c["codecs"])]
        except ConfigError as exc:
            raise ConfigError(f"codecs: {exc}") from None
        self.scope = CellScope(c["codec_file_types"], self.codecs, self.file_types)
        self.file_size_bytes = units.parse_size(c["file_size"])
        self.repeats = dict(c["repeats"])
        if self.repeats["max"] < self.repeats["min"]:
            raise ConfigError(f"repeats.max ({self.repeats['max']}) is below repeats.min "
                              f"({self.repeats['min']})")
        for key in ("looks", "moderated_looks"):
            looks = self.repeats[key]
            if any(b <= a for a, b in zip(looks, looks[1:], strict=False)):
                raise ConfigError(f"repeats.{key} {looks}: the looks must increase, e.g. "
                                  "[3, 5, 8]")
        # Refused when the config is read, like the design's other contradictions.
        self.idle_first_look = first_look(c["idle"]["count"], c["idle"]["min_count"])
        self.duty = self._duty()
        self.machine = EmulatedMachine.of(c["machine"])
        self.settings = self._settings()
        self.primary, self.primary_rule = self._primary()

    @classmethod
    def from_files(cls, paths: list[str | Path]) -> Study:
        config = merge_configs(paths)
        validate(config, " + ".join(map(str, paths)), paths)
        return cls(config)

    # --- building -------------------------------------------------------------------

    def _testbeds(self) -> dict[str, Testbed]:
        c = self.config
        listed = c.get("testbeds") or [c["testbed"]]
        names = [t["name"] for t in listed]
        if len(set(names)) != len(names):
            raise ConfigError(f"testbeds: names must differ, got {names}")
        for t in listed:
            if t.get("slurm") is not None and not t["slurm"].get("nodelist"):
                raise ConfigError(
                    f"testbed {t['name']}: give slurm.nodelist, the one node it is. A "
                    "testbed is one machine for the whole study; a constraint alone lets "
                    "Slurm place its jobs on different nodes, whose runs would be mixed "
                    "under one name (`sinfo -N -o '%N %f'` lists the nodes and features)")
        return {t["name"]: Testbed(
            name=t["name"], description=t.get("description", ""),
            target_dir=self._path(t.get("target_dir") or c["target_dir"], t["name"]),
            input_dir=self._path(t.get("input_dir") or c["input_dir"], t["name"]),
            meter={**c["meter"], **t.get("meter", {})}, slurm=t.get("slurm"),
            host=t.get("host"), study=self.name) for t in listed}

    def _path(self, template: str, testbed: str) -> str:
        try:
            return template.format(testbed=testbed, study=self.name)
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(f"path {template!r}: only {{study}} and {{testbed}} are "
                              f"replaced in paths ({exc})") from exc

    def _duty(self) -> DutyCycleWorkload | None:
        d = self.config.get("dutycycle")
        if not d:
            return None
        for name in d["codecs"]:
            if name != "plain":
                try:
                    codec_registry.get(name)
                except ConfigError as exc:
                    raise ConfigError(f"dutycycle.codecs: {exc}") from None
        if d["file_type"] not in self.file_types:
            raise ConfigError(f"dutycycle.file_type: {d['file_type']!r} is not among the "
                              f"study's file_types {self.file_types}")
        return DutyCycleWorkload(d["phases"], d["compute_s"], d["compute"], d["file_type"],
                         tuple(d["codecs"]))

    def _settings(self) -> dict[str, Setting]:
        f = self.config["factors"]
        media = f.get("medium") or {"default": self.config["target_dir"]}
        emulated = any(throttle.parse_bandwidth(b) is not None for b in f["bandwidth"])
        threads = self.config["threads"]
        levels = {"medium": list(media), "threads": threads if isinstance(threads, list)
                  else [threads], **{name: f[name] for name in FACTORS
                                     if name not in ("medium", "threads")}}
        levels = {name: levels[name] for name in FACTORS}  # in the table's order
        settings = {}
        for combo in itertools.product(*levels.values()):
            values = dict(zip(levels, combo, strict=True))
            s = Setting.of(values, medium_fields(media[values["medium"]], emulated),
                           threads_named=len(levels["threads"]) > 1)
            settings[s.name] = s
        for s in settings.values():  # every medium must be a valid one on every testbed
            for testbed in self.testbeds.values():
                s.medium_on(testbed)
        return settings

    def departures(self) -> list[str]:
        """Each value of the merged config that differs from the paper's setup, for a key
        its overlay (config `paper_setup`) sets, as "key: value (the paper's setup:
        value)"; places and names (PLACES, a medium's path) are no setup."""
        if not self.config["paper_setup"]:
            return []
        setup = merge_configs([self.config["paper_setup"]])  # the overlay alone
        out = []
        for key, paper in _leaves(setup):
            if key.split(".")[0] in PLACES or key.rsplit(".", 1)[-1] in MEDIUM_PLACES:
                continue
            here = _at(self.config, key)
            if here != paper:
                out.append(f"{key}: {_shown(here)} (the paper's setup: {_shown(paper)})")
        return out

    def _primary(self) -> tuple[Setting, str]:
        """The setting whose numbers stand for "the" setting in the report's single-setting
        sections: the config's `primary` factor values, else every factor's first value."""
        wanted = self.config.get("primary") or {}
        unknown = set(wanted) - set(FACTORS)
        if unknown:
            raise ConfigError(f"primary: unknown factors {sorted(unknown)}; valid: "
                              f"{', '.join(FACTORS)}")
        for s in self.settings.values():
            if all(str(s.column(k)) == str(v) for k, v in wanted.items()):
                break
        else:
            raise ConfigError(f"primary: no setting has {wanted}; settings: "
                              f"{', '.join(self.settings)}")
        described = ", ".join(f"{k} {s.column(k)}" for k in FACTORS)
        if wanted:
            rule = (f"the setting the config's primary key names ({', '.join(wanted)}), "
                    f"each other factor at its first listed value: {described}")
        else:
            rule = f"every factor at the first value the config lists: {described}"
        return s, rule

    # --- reading ----------------------------------------------------------------------

    def root(self, stage: str = RESULTS) -> str:
        """The study's tree of one stage: measured results, or the rehearsal's."""
        if stage not in STAGES:
            raise ValueError(f"stage {stage!r}: one of {STAGES}")
        return f"{stage}/{self.name}"

    @property
    def multi(self) -> bool:
        return len(self.testbeds) > 1

    @property
    def first_testbed(self) -> str:
        return next(iter(self.testbeds))

    def factor_values(self) -> dict[str, list[str]]:
        """Every factor's values in config order, as text."""
        return {f: list(dict.fromkeys(str(s.value(f)) for s in self.settings.values()))
                for f in FACTORS}

    @cached_property
    def varied_factors(self) -> list[str]:
        """The factors that take two or more values, in a fixed order."""
        return [f for f, values in self.factor_values().items() if len(values) >= 2]

    def jobs(self, testbed: str, stage: str = RESULTS) -> list[Job]:
        """Every measurement job of a testbed: each codec per file type and setting, with
        the plain baseline as a job of its own under the paper's design (under the verdict
        design each codec's job measures its own plain arm, under the moderated design
        pairs of its setting and file type's shared one), then the duty cycle's per
        setting. A codec limited to some file types (CellScope) has no job on the others;
        a single-threaded codec has none in a setting of another thread count than the
        first listed (threads_measured)."""
        plain = [] if self.verdict_design else ["plain"]
        root = self.root(stage)
        out = [Job(testbed, s, ftype, codec, root) for s in self.settings
               for ftype in self.file_types for codec in [*self.scope.codecs_on(ftype), *plain]
               if self.threads_measured(codec, s)]
        if self.duty:
            out += [Job(testbed, s, "dutycycle", codec, root) for s in self.settings
                    for codec in self.duty.codecs]
        return out

    def threads_measured(self, codec: str, setting: str) -> bool:
        """Whether a codec is measured in a setting as its thread count goes: plain and the
        multi-threaded codecs at every count, a single-threaded codec at the first listed
        only (it runs the same there as at any other)."""
        first = next(iter(self.settings.values())).threads
        return (codec == "plain" or codec_registry.get(codec).multithreaded
                or self.settings[setting].threads == first)

    def measure_order(self, testbed: str,
                      seconds: Callable[[Job], float] | None = None) -> list[Job]:
        """The order the moderated design measures a testbed's codec jobs in: setting by
        setting, the cheapest cells first (`seconds`: a job's write and read, from the
        plan's pilot, wattzip.model.plan.cell_seconds), so that the prior over the study's cells
        is fitted from cheap runs before the costly cells look at 2 runs per arm; every
        cell informs the prior alike (one degree of freedom per run past the first), so
        cheap cells inform it most per second. The config's order without a pilot."""
        jobs = [j for j in self.jobs(testbed) if j.file_type != "dutycycle"]
        if seconds is None:
            return jobs
        settings = list(self.settings)
        return sorted(jobs, key=lambda j: (settings.index(j.setting), seconds(j)))

    def previous_job(self, job: Job,
                     seconds: Callable[[Job], float] | None = None) -> Job | None:
        """The job measured just before this one in the moderated design's order (the
        workflow runs them in it); None for the first, and under the other designs."""
        if not self.moderated_design or job.file_type == "dutycycle":
            return None
        order = self.measure_order(job.testbed, seconds)
        at = order.index(job)
        return order[at - 1] if at else None

    def emulated_input_layouts(self) -> list[str]:
        """Where the inputs of the emulated disks' settings lived (wattzip.machine.media
        INPUT_LAYOUTS), in config order: the report says what was emulated."""
        return list(dict.fromkeys(s.medium_spec.get("inputs", "separate")
                                  for s in self.settings.values()
                                  if s.bandwidth_bytes_per_s is not None))

    @property
    def verdict_design(self) -> bool:
        """Planned looks, each codec's job measuring its own plain arm (the verdict
        design, and the moderated design, which shares variance across cells)."""
        return self.repeats["design"] in ("verdict", "moderated")

    @property
    def moderated_design(self) -> bool:
        return self.repeats["design"] == "moderated"

    def repeat_plan(self, job: Job) -> RepeatRule:
        """How many runs the job's operations get. Under the verdict design a codec's job
        measures its own plain arm and its codec, interleaved, and stops at the first look
        that decides its cell. The duty cycle, and every job of the paper's design, follow
        the paper's rule."""
        if not self.verdict_design or job.file_type == "dutycycle":
            return RepeatRule.of(self.repeats)
        return RepeatRule.of(self.repeats, self.looks, self.kinds(job))

    @cached_property
    def _claims(self) -> list:
        return load_claims()

    def kinds(self, job: Job) -> tuple[str, ...]:
        """The metrics whose break-even kind the job's looks decide: the config's
        (verdict.kind_metrics) and those a claim reads of its cell (the jobs judge T, E)."""
        wanted = {*self.config["verdict"]["kind_metrics"],
                  *kinds_read(self._claims, job.file_type, job.codec)}
        return tuple(m for m in JUDGED_METRICS if m in wanted)

    @property
    def looks(self) -> list[int]:
        """The planned looks of the verdict or the moderated design."""
        return self.repeats["moderated_looks" if self.moderated_design else "looks"]

    @cached_property
    def analysis_options(self) -> AnalysisOptions:
        """How this study's cells are decided (margin, workload, looks, confidence)."""
        return AnalysisOptions.of_study(self.repeats, self.config["verdict"])

    # --- each job's slice --------------------------------------------------------------

    @cached_property
    def crosscheck(self) -> dict:
        """The hyperfine cross-check's codecs and file type, checked against the study."""
        c = self.config["crosscheck"]
        for name in c["codecs"]:
            if name not in self.codecs:
                raise ConfigError(f"crosscheck.codecs: {name!r} is not among the study's "
                                  f"codecs {self.codecs}; name some of them (crosscheck: "
                                  "{codecs: [...]}), or none: []")
            if not self.scope.measures(c["file_type"], name):
                raise ConfigError(f"crosscheck.codecs: {name!r} is not measured on "
                                  f"{c['file_type']} (codec_file_types)")
        if c["codecs"] and c["file_type"] not in self.file_types:
            raise ConfigError(f"crosscheck.file_type: {c['file_type']!r} is not among the "
                              f"study's file_types {self.file_types}")
        return c

    def crosscheck_unconditioned(self, testbed: str) -> str:
        """Why hyperfine, which runs the commands on a plain directory with the machine as
        it is, would not time the primary setting as the harness did ("" when it would)."""
        m = self.primary.medium_on(self.testbeds[testbed])
        return ", ".join(f"{f} {value}" for f, value in self.primary.unconditioned(m.kind))

    def expect(self, testbed: str) -> dict:
        """The Slurm node and the host a testbed's runs must come from (None: any)."""
        t = self.testbeds[testbed]
        return {"node": (t.slurm or {}).get("nodelist"), "host": t.host}

    def _setting_slice(self, testbed: str, setting: str) -> dict:
        """A setting on a testbed as a spec carries it: its name and machine factors, and
        its medium placed on the testbed (wattzip.measure.spec)."""
        s = self.settings[setting]
        return {"setting": {"name": s.name, **s.machine_factors()},
                "medium": s.placed_medium_on(self.testbeds[testbed]),
                # The emulated machine (config machine:), in the spec only when emulated.
                **({"machine": dict(self.config["machine"])} if self.machine.emulated
                   else {})}

    def job_spec(self, job: Job) -> dict:
        """Everything one measurement job needs of the study, and nothing else: its
        testbed's meter, its setting, its codec, and the config's sections it reads
        whole, with what the model derives for it beside them (`wattzip job --spec`,
        wattzip.measure.spec). Editing a section it does not read leaves it, and so the
        job, unchanged."""
        plan = self.repeat_plan(job)
        s, c = self.settings[job.setting], self.config
        spec = {"spec": specs.JOB, "testbed": job.testbed, "codec": job.codec,
                "meter": self.testbeds[job.testbed].meter,
                **self._setting_slice(job.testbed, job.setting),
                "repeats": dict(c["repeats"]), "threads": s.threads,
                "codec_only": c["codec_only"], "looks": None,
                "quiet": dict(c["quiet"]), "drift": dict(c["drift"]),
                "drift_pool": f"{job.root}/{job.testbed}/journal",
                "expect": self.expect(job.testbed)}
        spec["setting"].update(bandwidth=s.bandwidth, copies=s.copies)
        if plan.looks:
            spec["verdict"] = dict(c["verdict"])
            spec["looks"] = {
                "runs": list(plan.looks), "kinds": list(plan.kinds),
                # The moderated design's priors come from the setting's other cells.
                "prior_journals": (f"{job.root}/{job.testbed}/journal/{job.setting}"
                                   if self.moderated_design else None)}
        if job.file_type == "dutycycle":
            spec["dutycycle"] = dict(c["dutycycle"])
        return spec

    def idle_spec(self, testbed: str, setting: str) -> dict:
        """The idle calibration's slice: the testbed's meter, the setting, and the config's
        idle, quiet and drift."""
        c = self.config
        return {"spec": specs.IDLE, "testbed": testbed,
                "meter": self.testbeds[testbed].meter,
                **self._setting_slice(testbed, setting),
                "idle": dict(c["idle"]), "quiet": dict(c["quiet"]),
                "drift": dict(c["drift"]), "expect": self.expect(testbed)}

    def job_spec_text(self, wildcards) -> str:
        """The spec of a measure rule's job, by rule job_spec's wildcards (testbed,
        setting, part: its file type or dutycycle, codec), as the workflow writes it."""
        job = Job(wildcards.testbed, wildcards.setting, wildcards.part, wildcards.codec,
                  self.root(RESULTS))
        return specs.text(self.job_spec(job))

    def idle_spec_text(self, wildcards) -> str:
        """The idle spec of rule idle_power's calibration, by its wildcards."""
        return specs.text(self.idle_spec(wildcards.testbed, wildcards.setting))

    def preflight_settings(self, testbed: str) -> dict:
        """Every setting of a testbed as plain values, for the pre-flight checks."""
        out = {}
        for name, s in self.settings.items():
            m = s.placed_medium_on(self.testbeds[testbed])
            out[name] = {"medium": m, "target_dir": m["path"], **s.machine_factors(),
                         "copies": s.copies, "bandwidth": s.bandwidth,
                         "machine": self.config["machine"]}
        return out

    def settings_rows(self) -> list[dict]:
        """settings.csv: one row per setting, one column per factor, the primary flagged."""
        duty = self.duty.describe() if self.duty else ""
        return [{**s.factors(), "bandwidth_bytes_per_s": s.bandwidth_bytes_per_s or "",
                 "dutycycle": duty, "machine": self.machine.describe(),
                 "primary": "true" if s is self.primary else "false"}
                for s in self.settings.values()]
