"""Small helpers every layer may use: atomic writes, digests, Markdown tables, paths of the data dir, processes
and their environment, torch threads and devices, console output. They import nothing above themselves."""
