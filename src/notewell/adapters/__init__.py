"""Outbound clients: OpenAI-compatible chat and embeddings, and choosing an embedder."""
