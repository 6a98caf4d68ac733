"""From the loaded spec to checked variants: expansion, names, a search's trials, derived values,
what templates see, the allowed-diff gate, constraints, and what ``run --command`` may paste."""
