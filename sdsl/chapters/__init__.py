"""One module per notebook chapter: the tables and figures of that chapter."""
