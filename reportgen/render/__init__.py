"""Rendering: results.json and its tables, the template context, HTML and PDF, atomic writing."""
