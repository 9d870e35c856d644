"""Search layer: query compilation, filters and keyword (FTS5/BM25) search over the index."""
