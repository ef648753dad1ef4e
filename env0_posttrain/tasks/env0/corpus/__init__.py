"""Corpus: a folder of env0 packages imported as a run's task set, and the task source that builds and judges
their episodes."""
