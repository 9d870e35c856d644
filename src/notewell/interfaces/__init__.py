"""Interfaces: the command line (later MCP, HTTP and the web page), all over the services API."""
