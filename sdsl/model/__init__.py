"""The method: scaling laws, throughput and the optimal draft (no tables, no plots)."""
