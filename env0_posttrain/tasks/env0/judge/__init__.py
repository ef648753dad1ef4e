"""Judge: a package's own tests/test.sh run unchanged on an end state, and the verdict read from its reward file."""
