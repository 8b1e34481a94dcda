"""Compaction: what to summarise, the compactor that runs it, branch summaries, token estimates."""
