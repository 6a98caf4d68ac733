"""The template sandbox: the one Jinja environment (sandboxed, bounded, strict, deterministic) and its JSON
and YAML filters."""
