"""A training run's curves and progress: the trackers it reports to, its per-step metrics, its plots and its progress
lines."""
