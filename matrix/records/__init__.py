"""Stored records: reading, merging, tables and transitions between releases."""
