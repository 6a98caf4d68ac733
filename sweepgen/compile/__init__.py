"""The compile pipeline, one module per stage in the order they run: spec, overrides, expand, derive,
context, gate, constraints, schema, render; then pipeline (the stages chained), lock, writer, check,
and api (what the CLI and the rest of sweepgen call)."""
