"""Both routes a dataclass schema takes, for tests that hold them to one answer."""

from __future__ import annotations

import functools
from typing import Any

from sweepgen.compile.schema import export, jsonschema_subset
from sweepgen.compile.schema.validate import _class_validator
from sweepgen.errors import Location


@functools.cache
def validators(cls: type) -> list[Any]:
    """Its exported JSON Schema, and the class itself."""
    schema = export.export(f"tests:{cls.__name__}", cls)
    return [
        lambda config: jsonschema_subset.validate(config, schema),
        _class_validator(cls, f"tests:{cls.__name__}", Location("spec.yaml")),
    ]
