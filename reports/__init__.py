"""Rendering of findings and scores: JSON, Markdown, HTML. Installed as ``tcprobe.reports``."""
