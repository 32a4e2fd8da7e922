"""The MCP server's model loader: the application layer's BackgroundModel (one
definition for the MCP server and the service, kenning.workspace.background)."""

from kenning.workspace.background import BackgroundModel

__all__ = ["BackgroundModel"]
