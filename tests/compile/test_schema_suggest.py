"""What a schema refusal suggests: the key most likely meant (a leading word dropped first, then
spelling), and a number or boolean written in quotes."""

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


def test_a_number_or_boolean_in_quotes_is_refused_saying_write_it_without_quotes():
    """TRL's argparse converts `learning_rate: "1e-5"`; the schema (and every comparison of values)
    takes the file as written, so the refusal says what to write."""
    from sweepgen.compile.schema.jsonschema_subset import validate

    number = {"type": "number"}
    maybe_bool = {"anyOf": [{"type": "boolean"}, {"type": "null"}]}
    assert validate("1e-5", number) == [
        ("", "expected number, got string (`1e-5` in quotes is text: write it without quotes for the number)")
    ]
    [(_, message)] = validate("false", maybe_bool)
    assert message.endswith("(`false` in quotes is text: write it without quotes for the boolean)")
    assert validate("3", {"type": "integer"})[0][1].endswith("for the integer)")
    # a string that is no number stays a plain type error: no advice that would not help
    assert validate("fast", number) == [("", "expected number, got string")]
    assert validate("1.5", {"type": "integer"}) == [("", "expected integer, got string")]
