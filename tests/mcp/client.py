"""The official MCP Python SDK's client (the `mcp` package from PyPI) against `patchgrade mcp`.

    client.py PATCH_FILE PATCHGRADE [ARG...]

Starts the server over stdio, initializes, lists the tools, calls `check_patch` with the
patch (the SDK checks the structured content against the tool's output schema), and prints
what it saw as JSON.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(patch_file, command, args):
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = (await session.list_tools()).tools
            tool = next(t for t in tools if t.name == "check_patch")
            with open(patch_file) as f:
                patch = f.read()
            result = await session.call_tool("check_patch", {"patch": patch})
            structured = result.structured_content or {}
            print(json.dumps({
                "server": init.server_info.name,
                "tools": [t.name for t in tools],
                "title": tool.title,
                "read_only": tool.annotations.read_only_hint if tool.annotations else None,
                "output_schema": tool.output_schema is not None,
                "input_required": tool.input_schema.get("required"),
                "is_error": result.is_error,
                "outcome": structured.get("outcome"),
                "feedback": result.content[0].text if result.content else None,
            }))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
