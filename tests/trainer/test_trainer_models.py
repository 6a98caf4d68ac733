"""Model sources: the built-in tiny model (built once, cached, loaded via from_pretrained), local
directories, and hub ids that are not on disk (a clear error, never a download)."""

from __future__ import annotations

import pytest

from sweepgen.errors import ConfigError
from sweepgen_trainer.config import ModelConfig, TinyModel
from sweepgen_trainer.models import ensure_model_dir, load_model_and_tokenizer, locate_model, tiny_model_dir

pytestmark = pytest.mark.train


def test_tiny_model_is_built_once_into_the_cache_and_loads_like_a_real_model(tiny_cache):
    model_cfg = ModelConfig()
    path = ensure_model_dir(model_cfg)
    assert path.parent.parent == tiny_cache and (path / "config.json").is_file()
    assert locate_model(model_cfg) == path
    stamp = (path / "config.json").stat().st_mtime_ns
    assert ensure_model_dir(model_cfg) == path
    assert (path / "config.json").stat().st_mtime_ns == stamp  # reused, not rebuilt
    model, tok = load_model_and_tokenizer(path, "float32")
    assert type(model).__name__ == "LlamaForCausalLM"
    assert model.config.vocab_size == len(tok) == 512
    assert tok.tokenize(" happy")[0] == "Ġhappy"  # one token: the happy reward is learnable
    assert tok.pad_token_id != tok.eos_token_id and tok.padding_side == "left"


def test_tiny_shapes_get_their_own_cache_entry():
    assert tiny_model_dir(TinyModel()) != tiny_model_dir(TinyModel(hidden_size=32))
    assert tiny_model_dir(TinyModel()) == tiny_model_dir(TinyModel())


def test_vocabulary_larger_than_the_corpus_allows_is_refused(tiny_cache):
    with pytest.raises(ConfigError, match="supports at most") as info:
        ensure_model_dir(ModelConfig(tiny=TinyModel(vocab_size=4000)))
    assert info.value.key == "model.tiny.vocab_size"
    assert not list((tiny_cache / "tiny").glob(".build-*"))  # the temporary build is cleaned up


def test_local_directory(tiny_cache, tmp_path, monkeypatch):
    built = ensure_model_dir(ModelConfig())
    monkeypatch.chdir(built.parent)
    assert locate_model(ModelConfig(path=built.name)).resolve() == built.resolve()
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no config.json"):
        locate_model(ModelConfig(path=str(tmp_path / "empty")))


def test_missing_directory_and_uncached_hub_id(tiny_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty Hugging Face cache
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    with pytest.raises(ConfigError, match="does not exist") as info:
        locate_model(ModelConfig(path="./models/nope"))
    assert info.value.key == "model.path"
    with pytest.raises(ConfigError, match="no such hub id in the local Hugging Face cache") as info:
        locate_model(ModelConfig(path="SimpleStories/SimpleStories-1.25M"))
    assert "huggingface-cli download SimpleStories/SimpleStories-1.25M" in info.value.hint


def _cache_dir_under(capability: str, tmp_path) -> str:
    """tiny_model_dir of the debate_copy prior in a fresh interpreter whose torch runs ``capability``."""
    import os
    import subprocess
    import sys

    code = (
        "import torch; from sweepgen_trainer.config import TinyModel; "
        "from sweepgen_trainer.models import tiny_model_dir; "
        "print(torch.backends.cpu.get_cpu_capability()); "
        "print(tiny_model_dir(TinyModel(prior='debate_copy')))"
    )
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability, "SWEEPGEN_CACHE": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    seen, folder = out.stdout.split()
    assert seen == capability.upper(), f"torch ignored ATEN_CPU_CAPABILITY={capability}: {seen}"
    return folder


def test_two_cpu_capabilities_give_two_cache_folders(tmp_path):
    # The prior trained under AVX2 and under the portable kernels has other weights (issue 38: 117,180
    # of 147,776 differed), so one must never load the other's folder.
    import torch

    if torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        pytest.fail("this machine's torch offers only the portable kernels; the test needs two code paths")
    portable, vectorized = _cache_dir_under("default", tmp_path), _cache_dir_under("avx2", tmp_path)
    assert portable != vectorized
    assert _cache_dir_under("default", tmp_path) == portable  # and the key is stable


def test_the_cache_key_names_the_torch_version_and_the_cpu_code_path(monkeypatch):
    from sweepgen_trainer import models

    env = models.build_environment()
    import torch

    assert env == {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    before = tiny_model_dir(TinyModel())
    monkeypatch.setattr(models, "build_environment", lambda: {**env, "torch": env["torch"] + ".other"})
    assert tiny_model_dir(TinyModel()) != before
