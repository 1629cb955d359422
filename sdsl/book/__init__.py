"""Writing the book's artifacts: outputs (tables, figures) and the figures' style."""
