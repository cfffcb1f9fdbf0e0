"""The report: Markdown pages, charts and Parquet tables built from stored records."""
