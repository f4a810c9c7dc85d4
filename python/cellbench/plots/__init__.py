"""Figures and the HTML page, drawn from stored results (never by re-running)."""
