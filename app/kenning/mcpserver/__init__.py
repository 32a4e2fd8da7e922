"""`kenning mcp`: Kenning as a Model Context Protocol server over stdio (a front end).

Like the CLI and the desktop app it holds no search policy: it parses a tool call,
runs the same code the CLI runs, and shapes the answer for an assistant's context
(JSON, bounded in bytes). Named `mcpserver`, not `mcp`, so it never shadows the SDK.
"""
