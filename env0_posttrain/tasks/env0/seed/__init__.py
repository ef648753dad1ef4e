"""Seed: a package's needles planted into our workspace (per service), env0's default fills read from an env0
checkout, env0's per-package seed hooks, and the needle manifest the package's scripts read."""
