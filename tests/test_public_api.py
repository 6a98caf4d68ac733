"""`sweepgen`'s declared public API: every name in ``__all__`` resolves to what the compile modules
define, the error classes share one root, and importing the package stays cheap (names load on use)."""

from __future__ import annotations

import inspect
import subprocess
import sys

import sweepgen
from sweepgen.compile import api
from sweepgen.compile.check import committed as check
from sweepgen.compile.output.lockfile import lock
from sweepgen.compile.output.write import writer
from sweepgen.compile.spec import model as spec
from sweepgen.compile.spec.variants import expand


def test_every_public_name_resolves_to_its_definition():
    assert sorted(sweepgen.__all__) == sweepgen.__all__ and len(set(sweepgen.__all__)) == len(
        sweepgen.__all__
    )
    defined_in = {
        api: ["render", "check", "load_and_expand", "resolve_variant", "matrix", "spec_json_schema"],
        writer: ["Outcome", "Action"],
        check: ["Report", "Problem"],
        expand: ["Expansion", "Variant"],
        spec: ["Spec"],
        lock: ["Lock", "LockFile"],
    }
    for module, names in defined_in.items():
        for name in names:
            assert getattr(sweepgen, name) is getattr(module, name), name
    lazy = {name for names in defined_in.values() for name in names}
    errors = set(sweepgen.__all__) - lazy - {"__version__"}
    assert errors == {
        "Location",
        "SweepgenError",
        "UserError",
        "SpecError",
        "TemplateError",
        "ValidationError",
        "ConfigError",
    }
    for name in errors - {"Location"}:
        assert issubclass(getattr(sweepgen, name), sweepgen.SweepgenError)
    assert set(sweepgen.__all__) <= set(dir(sweepgen))
    assert all(inspect.isfunction(getattr(sweepgen, n)) for n in defined_in[api])


def test_an_unknown_name_is_an_attribute_error():
    try:
        sweepgen.no_such_name  # noqa: B018 - the access is the test
    except AttributeError as err:
        assert "no_such_name" in str(err)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_the_package_loads_no_compiler():
    code = (
        "import sys, sweepgen; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jinja2', 'pydantic') "
        "or m.startswith('sweepgen.compile')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
