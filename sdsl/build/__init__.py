"""Building the book: runs, manifest, pipeline, comparison and the regeneration check."""
