"""env0's `env_0_stripe` as its task seeders use it (see env0_compat/__init__.py)."""
