// A stdio MCP server in busybox sh with one tool, shout (upper-cases its text): initialize,
// tools/list and tools/call, with just enough JSON handling for the fixed shapes forgectl sends.
#pragma once

namespace forge::test {

inline constexpr const char* kShoutMcpServer = R"SH(#!/bin/sh
while IFS= read -r line; do
  id=$(echo "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      echo '{"jsonrpc":"2.0","id":'$id',"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"shout","version":"1"}}}' ;;
    *'"method":"tools/list"'*)
      echo '{"jsonrpc":"2.0","id":'$id',"result":{"tools":[{"name":"shout","description":"upper-cases text","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}}' ;;
    *'"method":"tools/call"'*)
      text=$(echo "$line" | sed -n 's/.*"text":"\([^"]*\)".*/\1/p' | tr a-z A-Z)
      echo '{"jsonrpc":"2.0","id":'$id',"result":{"content":[{"type":"text","text":"'"$text"'"}]}}' ;;
  esac
done
)SH";

}  // namespace forge::test
