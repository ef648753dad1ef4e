"""Read: an env0 package on disk (its task.toml or task.md, instruction, declared services, needles module), its
files walked without following a link out of it, and the import folders a needles module sees."""
