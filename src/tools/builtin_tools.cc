// The full set of built-in tools.
#include "tools/builtin_tools.h"

#include "tools/calculator.h"

namespace forge::tools {

std::vector<std::shared_ptr<Tool>> builtin_tools(const BuiltinOptions& opts) {
  auto out = file_tools(opts);
  out.push_back(bash_tool(opts));
  out.push_back(grep_tool(opts));
  out.push_back(http_tool(opts));
  out.push_back(std::make_shared<Calculator>());
  for (auto& t : db_tools(opts)) out.push_back(std::move(t));
  if (auto rag = rag_tool(opts)) out.push_back(std::move(rag));
  if (auto browser = browser_tool(opts)) out.push_back(std::move(browser));
  return out;
}

}  // namespace forge::tools
