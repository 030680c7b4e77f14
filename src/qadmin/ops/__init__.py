"""Queue operations: what each command does, on any engine, returning plain data."""
