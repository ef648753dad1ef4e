"""Run: one package end to end (read, seed, lay out its sandbox and serve, solve.sh or a replay, judge)."""
