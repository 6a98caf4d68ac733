"""RunConfig: the one config model of the bundled trainer (pure pydantic; no torch, no trl).

Specs name it as their ``schema: sweepgen_trainer.config:RunConfig``, so a generated trainer config is checked
by ``sweepgen check`` before anything runs. Every section forbids unknown keys. Every default that
changes results is a value written here (not left to TRL), so ``config.yaml`` in the run directory,
which is this model dumped with every default, tells the whole truth. Defaults are our users'
validated GPU profile (beta 0.02, 32 completions per step, 16 generations, lr 1e-5, 2,000 steps).

Optional sections of other parts (``routing``, ``debate``, ``reward_shaping``) are one field each on
RunConfig, at the marked place, importing their model from their own module.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sweepgen_trainer import rewards
from sweepgen_trainer.debate.config import (
    DebateConfig,
    RewardShapingConfig,
    check_against_grpo,
    check_group_size,
    shaping_warnings,
)
from sweepgen_trainer.registry import KeyedValueError
from sweepgen_trainer.routing.config import RoutingConfig

BUILTIN_TINY = "builtin:tiny"

# Every section of every part shares this: no unknown key, no lax coercion (see Section).
# allow_inf_nan=False: `.inf`/`.nan` in any float field is an error at its line, not a crash after the
# model loads (an infinite learning rate) or a run that trains on garbage (an infinite KL coefficient).
STRICT = ConfigDict(extra="forbid", validate_assignment=True, strict=True, allow_inf_nan=False)

# transformers' OptimizerNames values, typed out so this module never imports transformers; a test
# checks the list against the installed transformers.
OptimizerName = Literal[
    "adamw_torch",
    "adamw_torch_fused",
    "adamw_torch_xla",
    "adamw_torch_npu_fused",
    "adafactor",
    "adamw_anyprecision",
    "adamw_torch_4bit",
    "adamw_torch_8bit",
    "ademamix",
    "sgd",
    "adagrad",
    "adamw_bnb_8bit",
    "adamw_8bit",
    "ademamix_8bit",
    "lion_8bit",
    "lion_32bit",
    "paged_adamw_32bit",
    "paged_adamw_8bit",
    "paged_ademamix_32bit",
    "paged_ademamix_8bit",
    "paged_lion_32bit",
    "paged_lion_8bit",
    "rmsprop",
    "rmsprop_bnb",
    "rmsprop_bnb_8bit",
    "rmsprop_bnb_32bit",
    "galore_adamw",
    "galore_adamw_8bit",
    "galore_adafactor",
    "galore_adamw_layerwise",
    "galore_adamw_8bit_layerwise",
    "galore_adafactor_layerwise",
    "lomo",
    "adalomo",
    "grokadamw",
    "schedule_free_radam",
    "schedule_free_adamw",
    "schedule_free_sgd",
    "apollo_adamw",
    "apollo_adamw_layerwise",
    "stable_adamw",
]
BUILTIN_DATASETS = ("builtin:stories", "builtin:arithmetic")


class Section(BaseModel):
    """Base of every config section: unknown keys are errors, assignments are validated, types strict.

    Strict: ``beta: true``, ``learning_rate: "0.005"``, ``shuffle: "no"`` and ``max_steps: 2.0`` are
    errors, not 1.0, 0.005, False and 2. The one widening kept is an int where a float is expected
    (pydantic strict allows it), because YAML writes ``1`` for the float 1.0.
    """

    model_config = STRICT


class TinyModel(Section):
    """Shape of the built-in tiny LlamaForCausalLM; its tokenizer is trained on the bundled stories."""

    vocab_size: int = Field(512, ge=300, le=4096, description="BPE vocabulary size of the tokenizer")
    hidden_size: int = Field(64, ge=8, description="model width")
    intermediate_size: int = Field(128, ge=8, description="MLP width")
    num_hidden_layers: int = Field(2, ge=1, description="transformer blocks")
    num_attention_heads: int = Field(4, ge=1, description="attention heads (hidden_size must divide)")
    max_position_embeddings: int = Field(256, ge=16, description="longest prompt+completion")
    init_seed: int = Field(0, description="seed of the weight initialisation (not the run seed)")
    prior: Literal["none", "debate_copy"] = Field(
        "none",
        description="`none`: random weights; `debate_copy`: a short supervised warm-up on made-up "
        "arithmetic debates in which the final answer repeats the critic (trainer/tiny_prior.py), so "
        "the critic's turn decides the team reward",
    )

    @model_validator(mode="after")
    def _heads_divide(self) -> TinyModel:
        if self.hidden_size % self.num_attention_heads:
            raise KeyedValueError(
                f"hidden_size {self.hidden_size} is not divisible by num_attention_heads "
                f"{self.num_attention_heads}; pick a head count that divides it",
                key="num_attention_heads",
            )
        return self


class ModelConfig(Section):
    path: str = Field(
        BUILTIN_TINY,
        description="`builtin:tiny`, a local Hugging Face model directory (relative to the working "
        "directory), or a hub id already in the local Hugging Face cache (never downloaded)",
    )
    tiny: TinyModel | None = Field(
        None, description="shape of the built-in tiny model; only with path `builtin:tiny`"
    )
    dtype: Literal["float32", "bfloat16", "float16"] = Field(
        "float32", description="dtype the weights are loaded in"
    )

    @model_validator(mode="after")
    def _tiny_only_for_builtin(self) -> ModelConfig:
        if self.path == BUILTIN_TINY and self.tiny is None:
            self.tiny = TinyModel()
        elif self.path != BUILTIN_TINY and self.tiny is not None:
            raise KeyedValueError(
                f"`model.tiny` only applies to path `{BUILTIN_TINY}`, but path is {self.path!r}; "
                "remove `model.tiny` or set the path to builtin:tiny",
                key="tiny",
            )
        return self


class DataConfig(Section):
    source: str = Field(
        "builtin:stories",
        description="`builtin:stories` (story openings), `builtin:arithmetic` (questions with "
        "answers) or a .jsonl file (relative to the working directory)",
    )
    prompt_field: str = Field("prompt", description="JSONL field holding the prompt text")
    max_prompts: int | None = Field(None, ge=1, description="use only the first N prompts (None: all)")
    shuffle: bool = Field(True, description="shuffle the prompts each epoch (TRL shuffle_dataset)")

    @field_validator("source")
    @classmethod
    def _known_source(cls, value: str) -> str:
        if value.startswith("builtin:") and value not in BUILTIN_DATASETS:
            raise ValueError(f"unknown built-in dataset {value!r}; known: {', '.join(BUILTIN_DATASETS)}")
        if not value.startswith("builtin:") and not value.endswith(".jsonl"):
            raise ValueError(f"data source {value!r} must be a builtin:* name or a .jsonl file")
        return value


class RewardConfig(Section):
    name: str = Field("happy_count", description="reward function from sweepgen_trainer.rewards.REWARDS")
    params: dict[str, Any] = Field(
        default_factory=dict, description="its parameters; omitted ones are filled with defaults"
    )

    @model_validator(mode="after")
    def _known_reward(self) -> RewardConfig:
        # The registry raises ValueError subclasses that list what exists; pydantic reports them.
        params = rewards.resolve_full(self.name, self.params)
        # Bypass validate_assignment: re-validating here would recurse into this validator.
        object.__setattr__(self, "params", params)
        return self


class GRPOConfig(Section):
    """GRPO hyper-parameters. Each maps 1:1 onto trl.GRPOConfig (see sweepgen_trainer.grpo_args)."""

    loss_type: Literal["grpo", "dapo", "dr_grpo", "bnpo", "cispo", "sapo"] = Field(
        "grpo", description="loss aggregation; ours is `grpo` (TRL's default would be `dapo`)"
    )
    beta: float = Field(0.02, ge=0, description="KL coefficient against the reference model")
    scale_rewards: Literal["group", "batch", "none"] = Field(
        "group", description="divide advantages by the reward std of the group, batch, or not"
    )
    learning_rate: float = Field(1e-5, gt=0, description="peak learning rate")
    num_generations: int = Field(16, ge=2, description="completions per prompt (the group size)")
    batch_size: int = Field(
        32,
        ge=2,
        description="completions per optimizer step per device (TRL "
        "per_device_train_batch_size); prompts per step = batch_size / num_generations",
    )
    gradient_accumulation_steps: int = Field(1, ge=1, description="micro-batches per update")
    max_steps: int = Field(2000, ge=1, description="optimizer steps")
    max_completion_length: int = Field(64, ge=1, description="tokens generated per completion")
    temperature: float = Field(1.0, gt=0, description="sampling temperature")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling (1.0: off)")
    top_k: int = Field(0, ge=0, description="top-k sampling (0: off)")
    repetition_penalty: float = Field(1.0, gt=0, description="generation repetition penalty")
    epsilon: float = Field(0.2, ge=0, description="lower clip range of the importance ratio")
    epsilon_high: float | None = Field(
        None,
        ge=0,
        description="upper clip range; unset: equal to epsilon (TRL's symmetric clip), written out resolved",
    )
    num_iterations: int = Field(1, ge=1, description="optimisation passes per generated batch (mu)")
    importance_sampling_level: Literal["token", "sequence"] = Field("token", description="GSPO")
    mask_truncated_completions: bool = Field(False, description="drop truncated completions")
    # Generation speed (docs/TRAINER.md "Fast generation"): TRL's own public arguments.
    use_transformers_continuous_batching: bool = Field(
        False,
        description="generate with transformers' continuous batching (paged attention) instead of "
        "model.generate; samples differ from generate's at the same seed",
    )
    cache_implementation: Literal["dynamic", "static"] | None = Field(
        None, description="model.generate's KV cache (None: transformers' default, dynamic)"
    )
    generation_batch_size: int | None = Field(
        None,
        ge=2,
        description="completions generated at once (None: batch_size × gradient_accumulation_steps); "
        "a multiple of batch_size, larger values reuse one generation for several optimizer steps",
    )
    optim: OptimizerName = Field("adamw_torch_fused", description="transformers optimizer name (its default)")
    weight_decay: float = Field(0.0, ge=0, description="AdamW weight decay")
    adam_beta1: float = Field(0.9, ge=0, lt=1)
    adam_beta2: float = Field(0.999, ge=0, lt=1)
    adam_epsilon: float = Field(1e-8, gt=0)
    max_grad_norm: float = Field(1.0, ge=0, description="gradient clipping (0: off)")
    lr_scheduler_type: Literal["linear", "constant", "constant_with_warmup", "cosine"] = Field(
        "linear", description="learning-rate schedule"
    )
    warmup_steps: int = Field(0, ge=0, description="linear warm-up steps")
    bf16: bool = Field(False, description="bf16 mixed precision (TRL's default would be on)")
    gradient_checkpointing: bool = Field(
        False, description="recompute activations in backward (TRL's default would be on)"
    )
    disable_dropout: bool = Field(False, description="turn dropout off in policy and reference")
    use_bias_correction_kl: bool = Field(
        True,
        description="multiply the per-token KL term by the importance ratio (TRL 1.16's "
        "default, kept so runs match plain TRL); changes the KL gradient whenever beta != 0",
    )
    sapo_temperature_pos: float = Field(
        1.0, gt=0, description="SAPO gate temperature for positive advantages (loss_type sapo only)"
    )
    sapo_temperature_neg: float = Field(
        1.05, gt=0, description="SAPO gate temperature for negative advantages (loss_type sapo only)"
    )

    @model_validator(mode="after")
    def _symmetric_clip_by_default(self) -> GRPOConfig:
        # TRL sets epsilon_high = epsilon when it is unset; a fixed 0.2 here would give `epsilon: 0.3`
        # an upper bound of 0.2. Bypass validate_assignment (it would re-run this validator).
        if self.epsilon_high is None:
            object.__setattr__(self, "epsilon_high", self.epsilon)
        return self

    @model_validator(mode="after")
    def _generation_batch_fits(self) -> GRPOConfig:
        size = self.generation_batch_size
        if size is not None and (size % self.batch_size or size % self.num_generations):
            raise KeyedValueError(
                f"generation_batch_size = {size} is not a multiple of batch_size = {self.batch_size} "
                f"and of num_generations = {self.num_generations}; TRL splits one generation into "
                "whole optimizer steps of whole groups (e.g. generation_batch_size = 2 × batch_size)",
                key="generation_batch_size",
            )
        return self

    @model_validator(mode="after")
    def _groups_fit_batch(self) -> GRPOConfig:
        completions = self.batch_size * self.gradient_accumulation_steps
        if completions % self.num_generations:
            raise KeyedValueError(
                f"batch_size × gradient_accumulation_steps = {completions} completions per step is "
                f"not a multiple of num_generations = {self.num_generations}; every prompt's group "
                "must fit whole in a step (e.g. batch_size = k × num_generations)",
                key="batch_size",
            )
        return self


class LoggingConfig(Section):
    logging_steps: int = Field(1, ge=1, description="write metrics.jsonl/samples.jsonl every N steps")
    samples_per_log: int | None = Field(
        None, ge=1, description="completions written to samples.jsonl per log (None: all of them)"
    )
    save_steps: int = Field(100, ge=1, description="checkpoint every N steps (and at the end)")
    save_total_limit: int | None = Field(2, ge=1, description="keep only the newest N checkpoints")
    summary_window: int = Field(
        10,
        ge=1,
        description="final_reward = mean reward of the last N generation steps (with grpo.num_iterations "
        "k each generation serves k optimizer steps, so the window spans k·N of them)",
    )
    degenerate_unique_ratio: float = Field(
        0.5, ge=0, le=1, description="degenerate if the unique-completion ratio is below this"
    )
    degenerate_jaccard: float = Field(
        0.8, ge=0, le=1, description="degenerate if mean pairwise Jaccard similarity is above this"
    )
    report_to: list[Literal["tensorboard", "wandb"]] = Field(
        default_factory=list,
        description="experiment trackers fed the metrics.jsonl rows (trainer/tracking.py); [] none",
    )

    @field_validator("report_to")
    @classmethod
    def _report_to_once(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError(f"logging.report_to lists a tracker twice: {value}")
        return value


class RunConfig(Section):
    """One training run. Top-level sections as in docs/ARCHITECTURE.md."""

    run_name: str = Field(description="name of the run (shown by `sweepgen run`/`report`)")
    output_dir: str = Field(description="run directory, relative to the working directory")
    seed: int = Field(42, description="seed of sampling, data order and dropout")
    model: ModelConfig = Field(default_factory=ModelConfig)
    data: DataConfig = Field(default_factory=DataConfig)
    reward: RewardConfig = Field(default_factory=RewardConfig)
    grpo: GRPOConfig = Field(default_factory=GRPOConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    # --- optional sections of other parts: one line each, `name: Model | None = None` ---
    routing: RoutingConfig | None = Field(
        None, description="gradient routing (sweepgen_trainer.routing); absent: off"
    )
    debate: DebateConfig | None = Field(
        None, description="two-role debate rollouts (sweepgen_trainer.debate)"
    )
    reward_shaping: RewardShapingConfig | None = Field(
        None,
        description="per-role reward shaping of debates (sweepgen_trainer.debate); required with `debate`",
    )

    @model_validator(mode="after")
    def _debate_fits_grpo(self) -> RunConfig:
        # Cross-section rules of the debate part; the rules themselves live in its modules.
        check_against_grpo(self.debate, self.reward_shaping, self.grpo.max_completion_length)
        check_group_size(self.reward_shaping, self.grpo.num_generations)
        if self.debate is not None and self.routing is not None:
            # Each picks its own trainer class; running one would silently drop the other.
            raise KeyedValueError(
                "`debate` and `routing` cannot be combined in one run; remove one of them", key="routing"
            )
        return self

    def routing_eval_data(self) -> DataConfig | None:
        """The routing eval's held-out prompt file as a data section (``routing.eval_data``), or None."""
        if self.routing is None or self.routing.eval_data is None:
            return None
        return DataConfig(source=self.routing.eval_data, prompt_field=self.data.prompt_field, shuffle=False)

    def warnings(self) -> list[str]:
        """Valid settings that change what the run means; printed at start (sweepgen_trainer.run)."""
        return shaping_warnings(self.reward_shaping, self.debate, self.grpo.num_generations)

    @model_validator(mode="after")
    def _checkpoints_end_generation_cycles(self) -> RunConfig:
        # TRL generates once per num_iterations optimizer steps (steps_per_generation is left at its
        # default, gradient_accumulation_steps). A checkpoint inside a cycle resumes by generating new
        # completions, so a resumed run would silently differ from an uninterrupted one.
        if self.logging.save_steps % self.grpo.num_iterations:
            raise KeyedValueError(
                f"logging.save_steps = {self.logging.save_steps} is not a multiple of grpo.num_iterations = "
                f"{self.grpo.num_iterations}: a checkpoint inside a generation cycle cannot resume exactly; "
                "make save_steps a multiple of num_iterations",
                key="logging.save_steps",
            )
        return self

    @field_validator("run_name")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        if not value or "/" in value or value in (".", ".."):
            raise ValueError(f"run_name {value!r} must be a non-empty name without '/'")
        return value

    @field_validator("output_dir")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("output_dir must not be empty")
        return value
