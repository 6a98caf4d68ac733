"""The key a refused key most likely meant: a leading word dropped first, then spelling."""

from __future__ import annotations

from sweepgen.compile.schema.suggest import closest_key

KNOWN = ["dtype", "torch_compile", "learning_rate", "lora_r", "lora_alpha", "per_device_train_batch_size"]


def test_a_word_added_before_an_allowed_key_names_that_key():
    assert closest_key("torch_dtype", KNOWN) == "dtype"
    assert closest_key("model_dtype", KNOWN) == "dtype"


def test_a_misspelling_is_named_by_its_closest_spelling():
    assert closest_key("learning_rat", KNOWN) == "learning_rate"
    assert closest_key("train_batch_size", KNOWN) == "per_device_train_batch_size"


def test_a_key_with_a_word_added_after_it_is_named_by_spelling():
    assert closest_key("lora_r_alpha", KNOWN) == "lora_alpha"


def test_nothing_close_suggests_nothing():
    assert closest_key("zzz", KNOWN) is None
