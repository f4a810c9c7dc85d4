"""Stored results as one self-contained HTML page (``cellbench report``)."""
