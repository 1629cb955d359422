"""One module per chapter of the book: its tables and figures (same stem as its notebook)."""
