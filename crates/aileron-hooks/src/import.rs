//! Claude Code's `permissions.allow/ask/deny` rules as an aileron.yaml.
