"""The ground floor's file formats: YAML 1.2 read with line:col, the one YAML writer, where each TOML
key is written, JSON's NaN and keys written twice, and an installed module's Python source parsed
without importing it."""
