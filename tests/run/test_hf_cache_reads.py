"""The start checks' reads of the Hugging Face caches (run/start/trl/hf_cache.py, accelerate's
default config in trl_processes.py), which a cluster often shares (HF_HOME in a group-writable
folder): a FIFO, a device or a huge file planted there is not judged, never waited on or read whole.
In-process, no TRL (huggingface_hub answers where it is installed, the layout reader in a light
install: both are held to this)."""

from __future__ import annotations

import os
import threading

from sweepgen.run.start.trl import hf_cache, trl_processes


def test_a_fifo_as_a_cached_datasets_info_is_not_waited_on(tmp_path, monkeypatch):
    """Before, the dataset_info.json of a cached dataset folder was read with read_text: a FIFO there
    held `run` forever before any run started. Now it is not judged (datasets says for itself)."""
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path))
    folder = tmp_path / "org___data" / "default" / "0.0.0" / "abc"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "dataset_info.json")
    look = lambda: hf_cache.has_dataset("org/data", {})  # noqa: E731
    assert _answered_within(look, folder / "dataset_info.json") == [True]


def test_a_cached_ref_past_the_limit_is_not_read_whole(tmp_path, monkeypatch):
    """Before, a model's refs/main linked to a huge file (or /proc/kmsg, which blocks) was read whole
    by huggingface_hub (is_file, then open): now such a ref is not judged (None), nothing read."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    refs = tmp_path / "models--org--model" / "refs"
    refs.mkdir(parents=True)
    (tmp_path / "models--org--model" / "snapshots").mkdir()
    big = tmp_path / "big"
    with open(big, "wb") as fh:
        fh.truncate(64 << 20)  # sparse: costs nothing to make
    (refs / "main").symlink_to(big)
    assert hf_cache.has_model("org/model", "main", {}) is None
    (refs / "main").unlink()
    opened: list[str] = []
    real_open = os.open
    with monkeypatch.context() as patched:
        patched.setattr(os, "open", lambda p, *a, **k: opened.append(str(p)) or real_open(p, *a, **k))
        assert hf_cache.has_model("org/model", "../../../../proc/kmsg", {}) is None  # a config's revision
    assert not [p for p in opened if "kmsg" in p], opened
    (refs / "main").write_text("a" * 40)  # a real ref whose snapshot is missing: not cached
    assert hf_cache.has_model("org/model", "main", {}) is False


def _answered_within(look, fifo, seconds=10.0) -> list[object]:
    """What ``look()`` answered, or [] when it waited on ``fifo`` (which is then let go)."""
    answer: list[object] = []
    looking = threading.Thread(target=lambda: answer.append(look()), daemon=True)
    looking.start()
    looking.join(timeout=seconds)
    if looking.is_alive():  # the old reader: let it go before failing
        with open(fifo, "w"):
            pass
        looking.join(timeout=seconds)
        return []
    return answer


def test_a_fifo_as_accelerates_default_config_is_not_waited_on(tmp_path):
    """Before, accelerate's default config (HF_HOME/accelerate/default_config.yaml) was stat'ed and
    opened: a FIFO there (or a link to one, whose size says 0) held `run` forever. Now not judged."""
    fifo = tmp_path / "default_config.yaml"
    os.mkfifo(fifo)
    assert _answered_within(lambda: trl_processes._own_file(str(fifo)), fifo) == [None]
