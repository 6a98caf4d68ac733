"""The report's statistics: numbers in, numbers out; no runs, files or page."""
