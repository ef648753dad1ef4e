"""The shell surface: the agent acts through a terminal in the task's sandbox (docs/SHELL.md)."""
