"""The HTTP API, its OpenAPI document, and the web page."""
