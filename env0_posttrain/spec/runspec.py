"""The run spec: everything that defines one run, in one validated, serialisable place.

Each section is its own pydantic model (the TRL `*Config` pattern), so every knob is declared
and documented once. Unknown fields are refused everywhere: a typo in a spec file must fail
loudly, naming the field, instead of silently running with a default. Numbers must be finite and
within a range a real run can use (`.inf`, `nan` and 1e23 steps are refused before anything runs).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from env0_posttrain.util.fsutil import atomic_write_text
from env0_posttrain.util.paths import Paths
from env0_posttrain.util.digests import sha256_hex
from env0_posttrain.util.source_lines import yaml_line
from env0_posttrain.spec import plugins
from env0_posttrain.spec.onpolicy import OnPolicySpec
from env0_posttrain.spec.scale import ScaleSpec
from env0_posttrain.spec.section import Section
from env0_posttrain.spec.shell import ShellSpec
from env0_posttrain.spec.suites import Env0Spec, SuiteSpec, check_suites
from env0_posttrain.spec.training import DEVICE_DOC, Device, Tracker, trackers

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"  # also a file name and a folder: never '.', '..' or hidden
RUN_ID_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128, no '...'"
# Ceilings far above any real run, so a typo or an overflow is refused instead of running for ever.
MAX_COUNT = 1_000_000  # tasks, rows, training steps, drills
MAX_STEPS = 10_000  # model calls in one episode
MAX_TOKENS = 1_048_576  # tokens in one model call or one training row
MAX_TRIALS = 1_000
MAX_CONCURRENCY = 4_096
MAX_PROCESSES = 1_024
MAX_SEED = 2**32 - 1  # numpy's seed range
MAX_TEMPERATURE = 10.0
Surface = Literal["tools", "shell", "both"]  # what the agent acts through (docs/SHELL.md)
SURFACE_DOC = "what the agent acts through: 'tools' (a function per API method), 'shell' (terminal + finish), 'both'"


def task_families() -> tuple[str, ...]:
    """The task families there are, as the tasks layer names them (tasks/families/names.py): read through the
    `env0_posttrain.task_families` entry points (spec/plugins.py) when a spec is validated, as the spec cannot import
    the tasks."""
    out: list[str] = []
    for line, names in plugins.load(plugins.TASK_FAMILIES).items():
        if not (isinstance(names, tuple) and all(isinstance(n, str) for n in names)):
            raise ValueError(f"entry point {plugins.TASK_FAMILIES}: {line} must name a tuple of family names")
        out += [n for n in names if n not in out]
    return tuple(out)


class TaskSelection(Section):
    """Which tasks a run draws and how it splits them."""

    families: list[str] = Field(default_factory=lambda: list(task_families()))
    templates: list[str] | None = Field(default=None, description="template ids; None = all templates of the families")
    n_train: int = Field(default=300, ge=1, le=MAX_COUNT)
    n_eval: int = Field(default=60, ge=0, le=MAX_COUNT, description="the random eval split; 0 only when the spec "
                        "names suites")
    n_heldout: int = Field(default=0, ge=0, le=MAX_COUNT, description="tasks from templates never used for training")
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    split_by_template: bool = Field(default=False, description="also forbid a template shared by train and eval")
    source: Path | None = Field(default=None, description="a folder of env0 task packages: the tasks are imported "
                                "from it (n_train + n_eval of them, in an order seeded by seed) instead of generated")

    @model_validator(mode="after")
    def _source_takes_no_templates(self) -> "TaskSelection":
        if self.source is not None:
            bad = [name for name, on in (("templates", self.templates is not None), ("n_heldout", self.n_heldout > 0),
                                         ("split_by_template", self.split_by_template)) if on]
            if bad:
                raise ValueError(f"tasks.source imports env0 packages (one template, 'env0'): {', '.join(bad)} "
                                 "cannot be used with it; with a preset that names starter templates (demo, "
                                 "demo-rl) add --set tasks.templates=null, or use --preset seeds-offline")
        return self

    @field_validator("families")
    @classmethod
    def _known_families(cls, v: list[str]) -> list[str]:
        known = task_families()
        unknown = sorted(set(v) - set(known))
        if unknown:
            raise ValueError(f"unknown families {unknown}; known: {list(known)}")
        if not v:
            raise ValueError("at least one family")
        return v


PROCESSES_DOC = (
    "worker processes the rollout's episodes are sharded over (one event loop each; the concurrency is split "
    "between them, and about four slots per process, up to two processes per core, keep each step's delay low). "
    "Only models a fresh process can route are sharded (litellm's own providers, env0-oracle); "
    "env0-local (the in-process student) always runs in this process"
)


class Sampling(Section):
    temperature: float = Field(default=0.0, ge=0.0, le=MAX_TEMPERATURE)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS, description="None = budget.max_tokens")


class TeacherSpec(Section):
    """The model that produces the training trajectories (any litellm model id)."""

    model: str = Field(default="env0-oracle/oracle", min_length=1)
    api_base: str | None = None
    api_key_env: str | None = Field(default=None, description="name of the env var holding the key; never the key")
    sampling: Sampling = Field(default_factory=Sampling)
    steering_prompt: str | None = Field(default=None, description="teacher-only; stripped from training rows")
    skill: float = Field(default=0.85, ge=0.0, le=1.0, description="oracle teacher only: 1 - error rate")
    trials: int = Field(default=1, ge=1, le=MAX_TRIALS)
    concurrency: int = Field(default=16, ge=1, le=MAX_CONCURRENCY)
    processes: int = Field(default=1, ge=1, le=MAX_PROCESSES, description=PROCESSES_DOC)
    max_steps: int | None = Field(default=None, ge=1, le=MAX_STEPS, description="model calls per teacher episode; "
                                  "None = budget.max_steps")
    min_pass_rate: float = Field(default=0.05, ge=0.0, le=1.0, description="blocking check: below it, no training")
    fault_rate: float | None = Field(default=None, ge=0.0, le=1.0, description="share of teacher calls that fail (wraps "
                                     "the model in env0-faulty/); None = no faults (an env0-faulty/ id: its 0.2)")
    surface: Surface = Field(default="tools", description="teacher, teacher_eval: " + SURFACE_DOC)

    @field_validator("model")
    @classmethod
    def _oracle_skill_in_id(cls, v: str) -> str:
        """`env0-oracle/<name>@<skill>` (also inside env0-faulty/): the skill must be a number in [0, 1]."""
        m = re.search(r"env0-oracle/[^/@]*@([^/]*)$", v)
        if m:
            try:
                ok = 0.0 <= float(m.group(1)) <= 1.0
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(f"oracle skill {m.group(1)!r} after '@' must be a number in [0, 1]")
        return v


class CorpusMix(Section):
    """Tiny student only: how much of each kind of text its base pre-training reads (document counts)."""

    request_repeats: int = Field(default=2, ge=0, le=MAX_COUNT, description="training requests in full chats (system prompt, tools)")
    short_repeats: int = Field(default=6, ge=0, le=MAX_COUNT, description="training requests as short plain-reply chats")
    copy_drills: int = Field(default=3000, ge=0, le=MAX_COUNT, description="training requests with entities swapped, repeated back")
    repeat_drills: int = Field(default=3000, ge=0, le=MAX_COUNT, description="'Repeat: a ; b' over random entities")
    directory_repeats: int = Field(default=10, ge=0, le=MAX_COUNT, description="each person's address, this many times")
    practice_calls: int = Field(default=3000, ge=0, le=MAX_COUNT, description="function calls to made-up practice tools")
    seed: int = Field(default=0, ge=0, le=MAX_SEED)


class StudentSpec(Section):
    """The base model that is trained and evaluated."""

    model: str = Field(default="tiny-qwen3", min_length=1, description="'tiny-qwen3' (built offline), a local path or a hub id")
    chat_template: str | None = Field(
        default=None, description="path to a jinja template that renders SFT rows and the TITO drift re-render; "
        "None = the tokenizer's own")
    pretrain_steps: int = Field(default=1200, ge=0, le=MAX_COUNT, description="tiny student only: short full pre-training of the base")
    corpus: CorpusMix = Field(default_factory=CorpusMix)
    tokenizer: str | None = Field(default=None, description="hub id or local path of the student's tokenizer; None = the "
                                  "student's own (for a hosted student: hosting.base_model_name, vLLM's default "
                                  "served name being the hub id)")
    device: Device = Field(default="auto", description=DEVICE_DOC)
    report_to: list[Tracker] = trackers("the tiny student's base pre-training: ")


class SFTDataPolicy(Section):
    """Which trajectories become training rows, and in what shape."""

    min_reward: float | None = Field(default=None, ge=-1.0, le=1.0, description="rewards lie in [-1, 1]; None = keep "
                                     "every row (the seeds' choice)")
    max_rows_per_task: int | None = Field(default=None, ge=1, le=MAX_COUNT)
    canonical_only: bool = Field(default=True, description="one row per task and trial")
    strip_think: bool = True
    strip_steering: bool = True
    first_turn_weight: int = Field(default=1, ge=1, le=1_000, description="repeat weight of the first assistant turn(s)")
    first_turns: int = Field(default=1, ge=1, le=MAX_STEPS)
    overlength: Literal["drop", "window"] = "drop"
    format: Literal["messages", "tito"] = "messages"
    upweight_mode: Literal["repeat", "weight"] = Field(
        default="repeat",
        description="first-turn upweighting by repeating rows, or (TITO rows only) a per-turn loss weight",
    )
    tito_source: Literal["auto", "native", "retokenise"] = Field(
        default="auto",
        description="TITO ids from captured token ids, from the student's chat template, or captured when usable",
    )
    drift_check: bool = Field(
        default=True,
        description="TITO rows only: a blocking check on sft_rows that the captured ids equal the student's chat "
        "template re-rendering the same messages (off = the check only reports)",
    )

    @model_validator(mode="after")
    def _weight_needs_tito(self) -> "SFTDataPolicy":
        if self.upweight_mode == "weight" and self.format != "tito":
            raise ValueError("sft.upweight_mode 'weight' is a per-turn loss weight and needs sft.format 'tito'; "
                             "chat rows are upweighted by repetition ('repeat')")
        return self


class LoraSpec(Section):
    """LoRA hyperparameters; defaults are the seeds' recipe (Qwen3.5-9B on one H100)."""

    r: int = Field(default=32, ge=1, le=65_536)
    alpha: int = Field(default=64, ge=1, le=1_000_000)
    dropout: float = Field(default=0.05, ge=0.0, lt=1.0)
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )
    modules_to_save: list[str] = Field(
        default_factory=list, description="modules trained in full beside the adapters, e.g. embed_tokens, lm_head"
    )
    learning_rate: float = Field(default=1e-4, gt=0.0, le=1.0)
    max_seq_length: int = Field(default=8192, ge=16, le=MAX_TOKENS)
    per_device_batch_size: int = Field(default=1, ge=1, le=MAX_CONCURRENCY)
    grad_accumulation: int = Field(default=8, ge=1, le=MAX_CONCURRENCY)
    max_steps: int = Field(default=300, ge=1, le=MAX_COUNT)
    epochs: float | None = Field(default=None, gt=0.0, le=10_000, description="if set, train by epochs instead of "
                                 "max_steps")
    warmup_ratio: float = Field(default=0.03, ge=0.0, lt=1.0)
    eval_fraction: float = Field(default=0.1, ge=0.0, lt=1.0, description="held-back share of episodes (whole episodes, seeded by lora.seed)")
    checkpoint_choice: Literal["eval_loss", "first_call"] = Field(
        default="eval_loss",
        description="which saved checkpoint becomes the adapter: lowest eval loss, or most first tool calls matched "
        "on the held-back training prompts (needs eval_fraction > 0)",
    )
    save_steps: int = Field(default=100, ge=1, le=MAX_COUNT)
    logging_steps: int = Field(default=10, ge=1, le=MAX_COUNT)
    bf16: bool | None = Field(default=None, description="None = bf16 exactly when a CUDA GPU is present")
    gradient_checkpointing: bool | None = Field(
        default=None,
        description="None = on a CUDA GPU the memory plan chooses (see gpu_memory_gb); True = every layer; False = none",
    )
    packing: bool = False
    group_by_length: bool = Field(
        default=False,
        description="batch rows of similar length together: less padding on padded (CPU) batches, but each batch "
        "then holds one kind of row, which hurt the tiny student's tool choice (see spec/presets/demo.yaml)",
    )
    use_liger: bool | None = Field(default=None, description="Liger kernels; None = on exactly when a CUDA GPU is present")
    allow_slow_kernels: bool = Field(
        default=False,
        description="train on CUDA without flash-linear-attention / liger-kernel (the torch fallbacks) instead of "
        "stopping before step 1; a Qwen3.5 step then takes about 5x as long",
    )
    gpu_memory_gb: float | None = Field(
        default=None, gt=0.0, le=100_000,
        description="GPU memory budget in GiB (as torch reports it); None = the device's. "
        "The plan checkpoints the fewest layers that fit (any k of n), offloading their inputs where faster (train/gpu/memory_plan.py)",
    )
    report_to: list[Tracker] = trackers()
    seed: int = Field(default=0, ge=0, le=MAX_SEED)

    @model_validator(mode="after")
    def _first_call_needs_held_back_rows(self) -> "LoraSpec":
        if self.checkpoint_choice == "first_call" and self.eval_fraction == 0:
            raise ValueError("lora.checkpoint_choice first_call scores held-back rows: set lora.eval_fraction > 0")
        return self


class EvalSpec(Section):
    """The eval arms' settings; `nightly` re-evaluates the tasks.n_eval split (suites say `nightly` per suite)."""

    trials: int = Field(default=3, ge=1, le=MAX_TRIALS)
    temperature: float = Field(default=0.0, ge=0.0, le=MAX_TEMPERATURE)
    max_steps: int | None = Field(default=None, ge=1, le=MAX_STEPS, description="base and adapter arms; None = "
                                  "budget.max_steps")
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS, description="base and adapter arms; None = "
                                   "budget.max_tokens")
    concurrency: int = Field(default=32, ge=1, le=MAX_CONCURRENCY)
    processes: int = Field(default=1, ge=1, le=MAX_PROCESSES, description=PROCESSES_DOC)
    nightly: bool = False
    surface: Surface = Field(default="tools", description="base, sft and rl arms: " + SURFACE_DOC)
    stuck_after: int | None = Field(default=3, ge=2, le=MAX_STEPS, description="the same tool calls N turns in a row end an episode (stuck)")
    repetition_window: int | None = Field(
        default=None, ge=16, le=MAX_TOKENS, description="local students' greedy replies: one whose last N tokens "
        "repeat a block of at most N/4 tokens is cut there (finish reason 'repetition'); None = decode to max_tokens")


class RLSpec(Section):
    """On-policy GRPO after SFT (train/grpo.py): whole episodes through the eval harness, verifier reward."""

    learning_rate: float = Field(default=1e-4, gt=0.0, le=1.0)
    max_steps: int = Field(default=20, ge=1, le=MAX_COUNT, description="optimizer steps")
    prompts_per_step: int = Field(default=4, ge=1, le=MAX_CONCURRENCY, description="training tasks per step; each "
                                  "played num_generations times")
    num_generations: int = Field(default=8, ge=2, le=MAX_CONCURRENCY, description="episodes per task: the GRPO group")
    temperature: float = Field(default=1.0, gt=0.0, le=MAX_TEMPERATURE, description="sampling temperature of "
                               "training episodes")
    beta: float = Field(default=0.04, ge=0.0, le=1_000.0, description="KL weight against a frozen copy of the SFT "
                        "adapter; 0 = no KL")
    loss_type: Literal["grpo", "dapo", "dr_grpo", "bnpo"] = "dapo"
    max_steps_per_episode: int | None = Field(default=None, ge=1, le=MAX_STEPS, description="None = eval.max_steps")
    logging_steps: int = Field(default=1, ge=1, le=MAX_COUNT)
    report_to: list[Tracker] = trackers()
    seed: int = Field(default=0, ge=0, le=MAX_SEED)


class HostingSpec(Section):
    """How base and adapter are served for evaluation."""

    kind: Literal["local", "openai_compatible"] = "local"
    api_base: str | None = None
    base_model_name: str | None = Field(default=None, description="served name of the base model")
    adapter_name_prefix: str = Field(default="env0-sft", description="served adapter name is <prefix>-<revision>")
    api_key_env: str | None = Field(default=None, description="name of the env var holding the server's key; "
                                                               "never the key")

    @model_validator(mode="after")
    def _endpoint_needs_base(self) -> "HostingSpec":
        if self.kind == "openai_compatible" and not self.api_base:
            raise ValueError("hosting.api_base is required when hosting.kind is openai_compatible")
        return self


class Budget(Section):
    """One step and token budget for every arm (teacher, base, adapter) unless an arm's own setting overrides it,
    so the teacher's reference ceiling and the student are measured under the same limits."""

    max_steps: int = Field(default=30, ge=1, le=MAX_STEPS, description="model calls per episode")
    max_tokens: int = Field(default=512, ge=1, le=MAX_TOKENS, description="completion tokens per model call")


class RunSpec(Section):
    """One post-training run: stored as data/runs/<run_id>.yaml and in DuckDB."""
    run_id: str
    description: str = ""
    tasks: TaskSelection = Field(default_factory=TaskSelection)
    teacher: TeacherSpec = Field(default_factory=TeacherSpec)
    student: StudentSpec = Field(default_factory=StudentSpec)
    sft: SFTDataPolicy = Field(default_factory=SFTDataPolicy)
    lora: LoraSpec = Field(default_factory=LoraSpec)
    eval: EvalSpec = Field(default_factory=EvalSpec)
    hosting: HostingSpec = Field(default_factory=HostingSpec)
    budget: Budget = Field(default_factory=Budget)
    rl: RLSpec | None = Field(default=None, description="None = no RL stage (rl_adapter and rl_eval_trajectories skip)")
    onpolicy: OnPolicySpec | None = Field(default=None, description="None = no on-policy distillation stage "
                                          "(onpolicy_adapter and onpolicy_eval_trajectories skip)")
    shell: ShellSpec = Field(default_factory=ShellSpec)
    scale: ScaleSpec = Field(default_factory=ScaleSpec, description="where every rollout round's episodes run: this "
                             "host's processes or a Ray cluster")
    compare_across_surfaces: bool = Field(default=False, description="allow teacher.surface != eval.surface: the report "
                                          "then sets arms that acted through different surfaces side by side (else refused)")
    torch_threads: int | None = Field(default=None, ge=1, le=4_096, description="torch's threads wherever a model trains or "
                                      "runs (they set the float sums' order); None = the cores allowed (util/torch_threads.py)")
    env0: Env0Spec = Field(default_factory=Env0Spec)
    suites: list[SuiteSpec] = Field(
        default_factory=list, description="named eval suites beside the tasks.n_eval split (none = that split only)")

    @model_validator(mode="after")
    def _suites_fit(self) -> "RunSpec":
        check_suites(self, task_families())
        return self

    @model_validator(mode="after")
    def _onpolicy_prompts_need_the_generator(self) -> "RunSpec":
        if self.onpolicy is not None and self.onpolicy.fresh_tasks and self.tasks.source is not None:
            raise ValueError(f"onpolicy.fresh_tasks ({self.onpolicy.fresh_tasks}) draws new tasks from the "
                             "generator's templates; tasks.source imports a fixed list of env0 packages, which has "
                             "none beyond the run's own (set fresh_tasks: 0)")
        for knob, off in (("entity_swaps", 0), ("entity_weight", 1.0)):
            value = getattr(self.onpolicy, knob, off) if self.onpolicy is not None else off
            if value != off and self.tasks.source is not None:
                raise ValueError(f"onpolicy.{knob} ({value}) works on the generated company's entities; "
                                 "tasks.source's env0 packages each seed their own world, which it does not know "
                                 f"(set {knob}: {off})")
        return self

    @model_validator(mode="after")
    def _one_surface_unless_asked(self) -> "RunSpec":
        if self.teacher.surface != self.eval.surface and not self.compare_across_surfaces:
            raise ValueError(f"teacher.surface {self.teacher.surface!r} != eval.surface {self.eval.surface!r}: the report "
                             "would compare arms on different surfaces; use one, or set compare_across_surfaces: true")
        return self

    def surface_line(self) -> str:  # which surface each arm acted through, as the report and the lineage state it
        t, e = self.teacher.surface, self.eval.surface
        return f"every arm: {t}" if t == e else f"teacher, teacher_eval: {t}; base, sft, rl: {e} (compared as asked)"

    def teacher_limits(self) -> tuple[int, int]:
        """(max steps, max tokens) of the teacher and teacher_eval arms: their own settings, else the budget."""
        t, b = self.teacher, self.budget
        return t.max_steps or b.max_steps, t.sampling.max_tokens or b.max_tokens

    def eval_limits(self) -> tuple[int, int]:
        """(max steps, max tokens) of the base and sft arms: the eval settings, else the budget."""
        e, b = self.eval, self.budget
        return e.max_steps or b.max_steps, e.max_tokens or b.max_tokens

    def budget_line(self) -> str:
        """The step and token limits each arm ran under, as the report states them."""
        arms = {"teacher, teacher_eval": self.teacher_limits(), "base, sft": self.eval_limits()}
        same = len(set(arms.values())) == 1
        text = "; ".join(f"{k}: {s} steps x {n} tokens" for k, (s, n) in arms.items())
        return ("one budget for every arm: " if same else "budgets differ by arm: ") + text

    @field_validator("run_id")
    @classmethod
    def _usable_run_id(cls, v: str) -> str:
        if problem := run_id_problem(v):
            raise ValueError(problem)
        return v

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)

    def digest(self) -> str:
        return sha256_hex(self.model_dump_json(), n=16)


class SpecError(ValueError):
    """A spec that cannot be used; the message names the file and every bad field."""


def parse_spec(data: object, source: str = "<spec>", line_of: Callable[[tuple], int | None] | None = None) -> RunSpec:
    """`line_of(loc)`, when the spec came from a file, gives a bad field's line for the message. One bad field is
    one line (`SOURCE: invalid run spec: FIELD (line N): WHY`); several are a line each under a header."""
    if not isinstance(data, dict):
        raise SpecError(f"{source}: a run spec must be a mapping, got {type(data).__name__}")
    try:
        return RunSpec.model_validate(data)
    except ValidationError as err:
        problems = []
        for e in err.errors():
            loc = ".".join(str(p) for p in e["loc"]) or "(root)"
            line = line_of(tuple(e["loc"])) if line_of else None
            hint = near_miss(e["loc"]) if e["type"] == "extra_forbidden" else None
            problems.append(f"{loc}{f' (line {line})' if line else ''}: "
                            + (f"unknown field; did you mean `{hint}`?" if hint else e["msg"]))
        if len(problems) == 1:
            raise SpecError(f"{source}: invalid run spec: {problems[0]}") from None
        raise SpecError("\n  - ".join([f"{source}: invalid run spec", *problems])) from None


def _section_model(annotation: object) -> type[BaseModel] | None:
    """The section model a field holds (`X`, `X | None`, `list[X]`), or None for a plain value."""
    todo = [annotation]
    while todo:
        t = todo.pop()
        if isinstance(t, type) and issubclass(t, BaseModel):
            return t
        todo += get_args(t)
    return None


def near_miss(loc: Sequence[str | int]) -> str | None:
    """For an unknown field at `loc` (`("tasks", "n_trian")`), the dotted name of the field it most likely meant
    (`tasks.n_train`), or None when no field of that section is close."""
    model: type[BaseModel] | None = RunSpec
    for part in loc[:-1]:
        if isinstance(part, int):
            continue  # an item of a list section (suites[0])
        field = model.model_fields.get(str(part)) if model else None
        model = _section_model(field.annotation) if field else None
    if model is None or not loc:
        return None
    close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1, cutoff=0.6)
    return ".".join([*(str(p) for p in loc[:-1]), close[0]]) if close else None


class SpecMissing(SpecError):
    """A run id with no spec file (the UI's "Add a partition" makes one without)."""


def load_run_spec(paths: Paths, run_id: str) -> RunSpec:
    """The run's spec from the data dir, parsed once per process: a missing file says how to make one."""
    path = paths.spec(run_id)
    if not path.is_file():
        raise SpecMissing(f"run {run_id!r} has no spec ({path}): make it with the new_run job (Launchpad: Jobs > "
                          f"new_run, run_id: {run_id}) or `env0-posttrain run new {run_id}`, then materialize again")
    return load_spec(path)


def load_spec(path: Path) -> RunSpec:
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:  # one line: the problem and where (PyYAML's own text spans several)
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise SpecError(f"{path}: not valid YAML{where}: {problem}") from None
    except UnicodeDecodeError as err:  # a binary or mis-encoded file: name it instead of crashing the sensor
        raise SpecError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    spec = parse_spec(data, str(path), lambda loc: yaml_line(text, loc))
    if path.stem != spec.run_id:
        raise SpecError(f"{path}: run_id '{spec.run_id}' does not match the file name '{path.stem}'")
    return spec


def write_spec(spec: RunSpec, runs_dir: Path) -> Path:
    """Write atomically: a half-written spec file would be picked up by the sensor."""
    return atomic_write_text(runs_dir / f"{spec.run_id}.yaml", spec.to_yaml())


def run_id_problem(run_id: str) -> str | None:
    """Why `run_id` cannot name a run (it names a spec file, an artifacts folder and a Dagster partition), or None."""
    if re.fullmatch(RUN_ID_PATTERN, run_id) and len(run_id) <= 128 and "..." not in run_id:
        return None
    why = ("'...' is Dagster's range syntax" if "..." in run_id and re.fullmatch(RUN_ID_PATTERN, run_id)
           else f"a run id is {RUN_ID_RULE}")
    return f"run id {run_id!r} cannot be used: {why}"


def is_valid_run_id(run_id: str) -> bool:
    return run_id_problem(run_id) is None
