"""env0-posttrain: the agent post-training loop as a Dagster asset graph."""
