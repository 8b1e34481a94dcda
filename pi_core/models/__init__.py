"""The models pi knows: the registry, ``--model`` resolution, models.toml/json, keys and auth, cost."""
