"""The six services: each a pydantic DB (data_model), a toolkit of real API methods, and seeding helpers."""
