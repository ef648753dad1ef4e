"""The run spec: `runspec.RunSpec` and its sections (`suites`: eval suites and the env0 checkout; `shell`: the
shell surface's limits; `training`: the value types several sections share, devices and trackers). Pydantic
contracts every layer above reads."""
