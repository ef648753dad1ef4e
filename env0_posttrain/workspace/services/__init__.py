"""The services: each a folder holding a pydantic DB (data_model), a toolkit of real API methods, seeding helpers and
one `SERVICE` descriptor (descriptor.py) that registry.py collects."""
