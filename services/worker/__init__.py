"""Stream consumers that apply commands for one game type."""
