"""env0's `env_0_stripe` as its task seeders use it (see ../__init__.py)."""
