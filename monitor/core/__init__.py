"""The pure helpers every layer may use: time, durations, A1 notation, error classes, logs, change tracking.

Imports nothing of the monitor's other packages (docs/architecture.md, "Layers")."""
