"""Measurements on models: the soft lookup, gradient norms (including back-propagation through time
written out), dependency matrices, gradients through deep stacks, exact costs and wall-clock timing, sampling the
next token (temperature, top-k, top-p) and word embeddings.
Imports `explorer.model` and `explorer.training`."""
