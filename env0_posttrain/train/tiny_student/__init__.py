"""The offline student: a tiny model of a real architecture, its locally trained tokenizer, and what it reads before
it is an agent."""
