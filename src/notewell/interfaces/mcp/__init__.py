"""The MCP server: the store's tools for agents, over stdio or at /mcp."""
