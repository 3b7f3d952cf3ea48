"""Tasks and their data, the shipped models (safetensors + JSON card: loading, checks, evaluation),
the training command that makes them, and seeded construction.  Imports only `explorer.model`."""
