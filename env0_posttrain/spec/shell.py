"""The run-spec section of the shell surface: the limits of one agent command (docs/SHELL.md)."""

from __future__ import annotations

from pydantic import Field

from env0_posttrain.spec.section import Section


class ShellSpec(Section):
    """Limits of one command on the shell surface (arms whose surface is 'shell' or 'both')."""

    timeout_s: float = Field(default=60.0, gt=0, le=86_400, description="a command's time limit when it sets none")
    max_timeout_s: float = Field(default=600.0, gt=0, le=86_400, description="the most a command's own `timeout` may ask for "
                                 "(600: env0's agent time limit)")
    output_cap: int = Field(default=30000, ge=100, le=10_000_000, description="characters of output the agent sees (OpenHands' cap)")
    max_processes: int = Field(default=256, ge=8, le=65_536, description="processes the sandbox may hold at once (fork bombs)")
    max_memory_mb: int = Field(default=4096, ge=64, le=1_048_576, description="memory the sandbox's processes may hold together "
                               "(MiB; more kills the command that asked)")
    max_writable_mb: int = Field(default=1024, ge=16, le=1_048_576, description="what the sandbox's writable folders "
                                 "(/tmp, /data, /logs) may hold together (MiB, a tmpfs: its pages count in max_memory_mb, "
                                 "so keep it well below; more is 'No space left on device')")
    max_writable_files: int = Field(default=65536, ge=64, le=100_000_000, description="files, folders and links those "
                                    "folders may hold together (more is 'No space left on device')")
