"""Tasks and their data, the shipped models (safetensors + JSON card: loading, checks, evaluation),
the training command that makes them (seeded builds: `explorer.model.building`).  Imports only `explorer.model`."""
