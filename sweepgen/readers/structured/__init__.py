"""YAML, JSON and TOML as the programs that consume them read them (PyYAML, OmegaConf, Hydra)."""
