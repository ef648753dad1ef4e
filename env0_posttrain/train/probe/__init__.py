"""The blocking sanity probe after training: on chat rows or token rows, with one verdict."""
