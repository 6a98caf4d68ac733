"""The compile pipeline, in rooms by concern: spec (the spec and its expansion), schema, template (the
sandbox), output (the render transaction) and check; api is what the CLI and the rest of sweepgen call."""
