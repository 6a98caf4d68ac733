"""Where a run's model comes from: a local Hugging Face directory, a hub id already in the local
Hugging Face cache, or the built-in tiny LlamaForCausalLM.

The tiny model is built once per shape (weights from a fixed ``init_seed``, a byte-level BPE tokenizer
trained on the bundled stories), saved under ``$SWEEPGEN_CACHE/tiny/<hash>/`` and then loaded through
``from_pretrained`` exactly like a real model, so the trainer has one loading path. Nothing here ever
downloads: a model that is not on disk is an error that says how to make it available offline.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from sweepgen.errors import ConfigError
from sweepgen_trainer.config import BUILTIN_TINY, ModelConfig, TinyModel
from sweepgen_trainer.tiny_prior import train_prior

if TYPE_CHECKING:  # annotations only: this module stays importable without torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

# Bump when the factory's output changes for the same TinyModel, so old cache entries are not reused.
FACTORY_VERSION = 1
CORPUS = Path(__file__).parent / "data" / "tokenizer_corpus.txt"
PRIOR_RECIPE = Path(__file__).parent / "tiny_prior.py"
SPECIAL_TOKENS = ["<|endoftext|>", "<|pad|>"]
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _cache_root() -> Path:
    """``$SWEEPGEN_CACHE`` or ``~/.cache/sweepgen``."""
    return Path(os.environ.get("SWEEPGEN_CACHE") or Path.home() / ".cache" / "sweepgen")


def locate_model(model: ModelConfig) -> Path | None:
    """The directory the model loads from, checked without torch; None for a tiny model not built yet.

    Raises ConfigError when a non-builtin model is not on disk.
    """
    if model.path == BUILTIN_TINY:
        path = tiny_model_dir(_tiny(model))
        return path if (path / "config.json").is_file() else None
    local = Path(model.path).expanduser()
    if local.is_dir():
        if not (local / "config.json").is_file():
            raise ConfigError(
                f"model directory {model.path!r} has no config.json",
                key="model.path",
                hint="point model.path at a Hugging Face model directory (config.json, weights, "
                "tokenizer files), e.g. one saved with `save_pretrained`",
            )
        return local
    if _HUB_ID.match(model.path) and not model.path.startswith((".", "/")):
        cached = _hub_cache_snapshot(model.path)
        if cached is not None:
            return cached
        raise ConfigError(
            f"model {model.path!r} does not exist: no such directory in {Path.cwd()}, and no such "
            "hub id in the local Hugging Face cache",
            key="model.path",
            hint=f"this trainer never downloads; for a directory, give its path relative to where "
            f"the run starts; for a hub model, on a machine with internet run "
            f"`huggingface-cli download {model.path} --local-dir models/{model.path.split('/')[-1]}`, "
            "copy the folder here and set model.path to it",
        )
    raise ConfigError(
        f"model directory {model.path!r} does not exist (looked in {Path.cwd()})",
        key="model.path",
        hint="model.path is relative to the directory the run starts in; give an existing "
        f"Hugging Face model directory or `{BUILTIN_TINY}`",
    )


def _hub_cache_snapshot(repo_id: str) -> Path | None:
    # Only look; try_to_load_from_cache never touches the network.
    from huggingface_hub import try_to_load_from_cache  # noqa: PLC0415 - lazy: huggingface_hub loads only for a hub id

    found = try_to_load_from_cache(repo_id, "config.json")
    return Path(found).parent if isinstance(found, str) else None


def build_environment() -> dict[str, str]:
    """What besides the recipe changes the built model's bytes: the torch version (its initialisers and
    kernels) and the CPU code path its kernels take (``ATEN_CPU_CAPABILITY`` or what the CPU offers:
    the prior's training under AVX2 and under the portable kernels rounds differently and gives other
    weights). Both are part of the cache key, so a model built under one never loads under the other."""
    import torch  # noqa: PLC0415 - lazy: this module stays importable without torch

    return {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability()}


def tiny_model_dir(tiny: TinyModel) -> Path:
    """Cache folder for this tiny shape: a hash of the shape, the factory version, the corpus and the
    build environment (:func:`build_environment`)."""
    shape = tiny.model_dump()
    if shape["prior"] == "none":
        del shape["prior"]
    else:  # the prior's recipe is its module: a changed recipe is another model
        shape["prior_recipe"] = hashlib.sha256(PRIOR_RECIPE.read_bytes()).hexdigest()
    key = json.dumps(
        {
            "tiny": shape,
            "factory": FACTORY_VERSION,
            "corpus": hashlib.sha256(CORPUS.read_bytes()).hexdigest(),
            "environment": build_environment(),
        },
        sort_keys=True,
    )
    return _cache_root() / "tiny" / hashlib.sha256(key.encode()).hexdigest()[:16]


def ensure_model_dir(model: ModelConfig) -> Path:
    """The model directory, building the tiny model first when needed."""
    path = locate_model(model)
    if path is not None:
        return path
    return build_tiny_model(_tiny(model))


def _tiny(model: ModelConfig) -> TinyModel:
    # ModelConfig fills `tiny` in for builtin:tiny; only a hand-built object could lack it.
    if model.tiny is None:
        raise ValueError("model.tiny is unset for builtin:tiny")
    return model.tiny


def build_tiny_model(tiny: TinyModel) -> Path:
    """Train the tokenizer, initialise the model, save both; atomic, safe with concurrent builders."""
    final = tiny_model_dir(tiny)
    if (final / "config.json").is_file():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=final.parent))
    try:
        tokenizer = train_tokenizer(tiny.vocab_size)
        tokenizer.save_pretrained(tmp)
        model = _init_model(tiny, len(tokenizer), tokenizer)
        if tiny.prior == "debate_copy":
            model = train_prior(model, tokenizer)
        model.save_pretrained(tmp)
        try:
            os.replace(tmp, final)  # atomic publish of the whole folder
        except OSError:
            if not (final / "config.json").is_file():
                raise
            # Another run published the same model first; ours is identical and unneeded.
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)  # our own temporary build folder only
    return final


def train_tokenizer(vocab_size: int) -> PreTrainedTokenizerBase:
    """A byte-level BPE tokenizer trained on the bundled corpus, as a PreTrainedTokenizerFast."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: PLC0415 - lazy: this module stays importable without torch (tokenizers only for the tiny model)
    from transformers import PreTrainedTokenizerFast  # noqa: PLC0415 - lazy: this module stays importable without torch

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train([str(CORPUS)], trainer)
    if tok.get_vocab_size() < vocab_size:
        # BPE stops when the corpus has no more pairs to merge; a smaller vocabulary than asked for
        # would silently change the model, so refuse instead.
        raise ConfigError(
            f"the bundled tokenizer corpus supports at most {tok.get_vocab_size()} tokens, "
            f"but model.tiny.vocab_size is {vocab_size}",
            key="model.tiny.vocab_size",
            hint=f"set model.tiny.vocab_size to {tok.get_vocab_size()} or less",
        )
    # the fast tokenizer's constructor is unannotated in transformers 5
    make = cast(Callable[..., "PreTrainedTokenizerBase"], PreTrainedTokenizerFast)
    return make(
        tokenizer_object=tok,
        eos_token=SPECIAL_TOKENS[0],
        bos_token=SPECIAL_TOKENS[0],
        pad_token=SPECIAL_TOKENS[1],
        padding_side="left",  # decoder-only generation pads on the left
    )


def _init_model(tiny: TinyModel, vocab_size: int, tokenizer: PreTrainedTokenizerBase) -> PreTrainedModel:
    import torch  # noqa: PLC0415 - lazy: this module stays importable without torch
    from transformers import LlamaConfig, LlamaForCausalLM  # noqa: PLC0415 - lazy: this module stays importable without torch

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=tiny.hidden_size,
        intermediate_size=tiny.intermediate_size,
        num_hidden_layers=tiny.num_hidden_layers,
        num_attention_heads=tiny.num_attention_heads,
        num_key_value_heads=tiny.num_attention_heads,
        max_position_embeddings=tiny.max_position_embeddings,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    # Fork the RNG so building the model never shifts the run's random stream.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(tiny.init_seed)
        return LlamaForCausalLM(config)


def load_model_and_tokenizer(model_dir: Path, dtype: str) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load through ``from_pretrained`` with ``local_files_only`` so nothing can hit the network."""
    import torch  # noqa: PLC0415 - lazy: this module stays importable without torch
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415 - lazy: this module stays importable without torch

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    if tokenizer.pad_token is None:
        # GRPO pads completions; reuse EOS as pad (a common, documented choice for base models).
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        model_dir, dtype=getattr(torch, dtype), local_files_only=True
    )
    return model, tokenizer
