"""env0-posttrain: the agent post-training loop as a Dagster asset graph."""

import os as _os

# Before torch loads (and with it OpenMP): threads waiting at a parallel region sleep instead of spinning, so a
# run beside other busy processes slows by about the CPU share it lost, not several times that (util/torch_threads.py).
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
