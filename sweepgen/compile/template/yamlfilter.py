"""The templates' ``to_yaml`` / ``yaml_scalar`` filters: the ground floor's YAML writer
(``sweepgen.formats.yamlwrite``), plus the one kind of value only a template has: an undefined name, which is
an error (StrictUndefined), never a string.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Undefined

from sweepgen.compile.template import bounds
from sweepgen.formats import yamlwrite


def yaml_scalar(value: Any) -> str:
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    return yamlwrite.yaml_scalar(value)


class YamlWriter(yamlwrite.YamlWriter):
    """``to_yaml`` as a filter: the ground floor's cached writer, undefined names refused."""

    def scalar(self, value: Any) -> str:
        return yaml_scalar(value)

    def __call__(self, value: Any, indent: int = 0) -> str:
        bounds.check_indent("to_yaml", value, indent, per_level=False)
        return self.block(value, indent)


def to_yaml(value: Any, indent: int = 0) -> str:
    """Block-style YAML of plain data, keys in their given order; no trailing newline."""
    return YamlWriter()(value, indent)
