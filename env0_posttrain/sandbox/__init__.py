"""The bubblewrap sandbox: env0's container layout without Docker, one container per command (allowlist root, no
capabilities, a seccomp filter, private loopback, capped writable tmpfs, pids and memory cgroups). The env0 runner
runs a package's scripts in it and the shell surface an agent's commands."""
