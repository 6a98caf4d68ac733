"""Schemas: the spec's optional `schema:` (pydantic model, dataclass or JSON Schema), the JSON Schema subset,
`schema --export`, and `choices:`."""
