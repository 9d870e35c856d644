"""Interfaces: the command line, MCP, HTTP and the web page, the agent runtimes, all over the services API."""
