"""The library's tool server: a Tolokaforge stdio MCP server (tolokaforge.core.tools_interface).

forgectl runs it in the runner as uid 3000 (the agent cannot read it or its state) and seeds its
state from the task's initial_state.json_db; golden replay runs a fresh copy of it elsewhere.
"""

from typing import Annotated

from pydantic import Field

from tolokaforge.core.tools_interface import ToolError, create_server

mcp, registry, TOOLS = create_server(__file__, "library")


def _find(rows: list, key: str, value: str, what: str) -> dict:
    for row in rows:
        if row[key] == value:
            return row
    raise ToolError(f"{what} '{value}' not found")


@registry.tool("Search the catalogue by a word of the title; returns the matching books.")
def search_books(data: dict, query: Annotated[str, Field(min_length=2, description="A word of the title")]) -> list:
    q = query.lower()
    return [b for b in data["books"] if q in b["title"].lower()]


@registry.tool("Look up a member by id.")
def get_member(data: dict, member_id: Annotated[str, Field(description="Member id, e.g. 'M-7'")]) -> dict:
    return _find(data["members"], "id", member_id, "Member")


@registry.tool("Lend a copy of a book to a member.")
def checkout_book(
    data: dict,
    member_id: Annotated[str, Field(description="Member id")],
    book_id: Annotated[str, Field(description="Book id, e.g. 'B-2'")],
) -> dict:
    member = _find(data["members"], "id", member_id, "Member")
    book = _find(data["books"], "id", book_id, "Book")
    if member["suspended"]:
        raise ToolError(f"Member {member_id} is suspended")
    if book["available"] < 1:
        raise ToolError(f"No copy of {book_id} is available")
    book["available"] -= 1
    loan = {"id": f"L-{len(data['loans']) + 1}", "member_id": member_id, "book_id": book_id}
    data["loans"].append(loan)
    return loan


if __name__ == "__main__":
    mcp.run(transport="stdio")
