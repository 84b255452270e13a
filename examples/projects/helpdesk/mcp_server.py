"""The helpdesk's ticket tools, shared by every task of the project (each names ../../mcp_server.py).

A Tolokaforge stdio MCP server on tolokaforge.core.tools_interface; each task seeds its state from
../../data/tickets.json (initial_state.json_db).
"""

from typing import Annotated, Literal

from pydantic import Field

from tolokaforge.core.tools_interface import ToolError, create_server

mcp, registry, TOOLS = create_server(__file__, "helpdesk")


def _ticket(data: dict, ticket_id: str) -> dict:
    for t in data["tickets"]:
        if t["id"] == ticket_id:
            return t
    raise ToolError(f"Ticket '{ticket_id}' not found")


@registry.tool("List the open tickets of a user.")
def list_tickets(data: dict, user: Annotated[str, Field(description="The user's login, e.g. 'ada'")]) -> list:
    return [t for t in data["tickets"] if t["user"] == user and t["status"] == "open"]


@registry.tool("Close an open ticket with a resolution.")
def close_ticket(
    data: dict,
    ticket_id: Annotated[str, Field(description="Ticket id, e.g. 'T-101'")],
    resolution: Annotated[str, Field(min_length=3, description="What resolved it")],
) -> dict:
    t = _ticket(data, ticket_id)
    if t["status"] != "open":
        raise ToolError(f"Ticket {ticket_id} is {t['status']}, not open")
    t["status"], t["resolution"] = "closed", resolution
    return t


@registry.tool("Hand an open ticket to another team.")
def escalate_ticket(
    data: dict,
    ticket_id: Annotated[str, Field(description="Ticket id")],
    team: Annotated[Literal["facilities", "security", "network"], Field(description="The team that takes it")],
) -> dict:
    t = _ticket(data, ticket_id)
    if t["status"] != "open":
        raise ToolError(f"Ticket {ticket_id} is {t['status']}, not open")
    t["status"], t["team"] = "escalated", team
    return t


if __name__ == "__main__":
    mcp.run(transport="stdio")
