"""Suites about the repository as a whole rather than one module of the package: the layering and lint rules, the
docs, the bench scripts and the Ray deploy manifest, and the bad-input probe that walks every entry point. Every
other test lives in the folder that mirrors the package code it tests (the tests of `env0_posttrain/x/y.py` are
under `env0_posttrain_tests/x/`)."""
