"""The commands: argument parsing, printing and exit codes, and what each command orchestrates."""
