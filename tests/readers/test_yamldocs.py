"""A YAML stream of several documents (`---`) is compared document by document, as
`yaml.safe_load_all` and `kubectl apply -f` read it: one document inserted, removed or edited is
one change (it was exit 2: "the file holds a second YAML document")."""

from __future__ import annotations

import pytest
import yaml
from diff_support import compared
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.errors import ConfigError


def _changes(one: str, two: str, yaml_version: str | None = None) -> list[tuple[str, str]]:
    found = compared(one, two, ".yaml", yaml_version=yaml_version).changes
    return [(change.dotted, change.kind) for change in found]


_JOB = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  parallelism: {n}\n"
_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  lr: '{lr}'\n"
_NS = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: rl\n"


def test_an_edit_in_a_later_document_is_a_change():
    assert _changes("a: 1\n---\nb: 2\n", "a: 1\n---\nb: 3\n") == [("@documents[1].b", "changed")]


def test_kubernetes_objects_are_paired_by_kind_and_name():
    one = "---\n".join([_MAP.format(lr="1e-5"), _JOB.format(n=2)])
    # a Namespace inserted first and a trailing `---` (an empty document kubectl skips)
    two = "---\n".join([_NS, _MAP.format(lr="2e-5"), _JOB.format(n=2), ""])
    assert sorted(_changes(one, two)) == [
        ("@documents.ConfigMap/cfg.data.lr", "changed"),
        ("@documents.Namespace/rl", "added"),
    ]
    # kubectl applies them in file order (a CRD before its objects): another order is one change
    swapped = "---\n".join([_JOB.format(n=2), _MAP.format(lr="1e-5")])
    assert _changes(one, swapped) == [("@documents.@order", "changed")]


def test_a_document_added_to_a_file_of_one_is_one_change():
    assert _changes("a: 1\n", "c: 0\n---\na: 1\n") == [("@documents[0]", "added")]
    assert _changes(_JOB.format(n=2), "---\n".join([_NS, _JOB.format(n=2)])) == [
        ("@documents.Namespace/rl", "added")
    ]


def test_a_list_is_not_a_stream_of_its_items():
    # `yaml.safe_load` reads the first, refuses the second: never equal
    assert _changes("- a: 1\n- b: 2\n", "a: 1\n---\nb: 2\n")


def test_omegaconf_still_refuses_a_second_document():
    with pytest.raises(ConfigError, match="second YAML document"):
        _changes("a: ${b}\nb: 1\n---\nc: 1\n", "a: 1\nb: 1\n")


_DOCUMENT = st.dictionaries(
    st.sampled_from(["lr", "steps", "name", "seed"]),
    st.one_of(st.integers(0, 3), st.sampled_from(["x", "y"])),
    min_size=1,
    max_size=3,
)


@settings(deadline=None, max_examples=60)
@given(st.lists(_DOCUMENT, min_size=1, max_size=5), _DOCUMENT, st.data())
def test_property_one_document_inserted_or_changed_is_one_change(documents, new, data):
    one = yaml.safe_dump_all(documents)
    at = data.draw(st.integers(0, len(documents)))
    inserted = yaml.safe_dump_all([*documents[:at], new, *documents[at:]])
    changes = _changes(one, inserted)
    assert len(changes) == 1 and changes[0][1] == "added", changes
    edited = [dict(d) for d in documents]
    key = data.draw(st.sampled_from(sorted(edited[at % len(edited)])))
    edited[at % len(edited)][key] = "changed"
    changes = _changes(one, yaml.safe_dump_all(edited))
    where = f"@documents[{at % len(edited)}]." if len(edited) > 1 else ""  # one document: the file
    assert [path for path, _ in changes] == [f"{where}{key}"]  # changed (or its type: 0 -> str)
    assert list(yaml.safe_load_all(one)) != edited  # the oracle: the loader sees a change
