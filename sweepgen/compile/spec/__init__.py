"""The spec and its expansion: the spec model and loading, overrides, sample and search blocks, seeds,
expansion into variants, derived values, the allowed-diff gate and cross-field constraints."""
