"""The spec and its expansion: the spec model and loading, overrides, limits and seeds (here), the sample
and search blocks (sampling/), what a run asks of an executor (request/), and expansion into variants,
derived values, the allowed-diff gate and cross-field constraints (variants/)."""
