// A Tolokaforge-format search_kb task written for forgectl's tests (not copied from Tolokaforge): a
// help desk's knowledge base in kb/ (initial_state.rag.corpus_dir) on the built-in core stack, which
// the run's loader gives rag. Next to its documents kb/ holds what must never be served: grading
// material by name, the task's own grading file by a link, a hidden file, a file that is not a
// document. Each of those carries kGradingMarker, assembled so no command line or query holds it.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace forge::test::tf_rag {

inline const std::string kMarkerHead = "KB-GRADING-";
inline const std::string kGradingMarker = kMarkerHead + "7e2a";
inline constexpr const char* kTaskId = "kb_gateway";
inline constexpr const char* kGateway = "vpn-eu-2.example.test";  // only in kb/network/vpn.md

inline void put(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// The documents, by doc_id (their path below kb/), and a question each answers best.
struct Doc {
  const char* doc_id;
  const char* text;
  const char* question;
};
inline const std::vector<Doc>& documents() {
  static const std::vector<Doc> docs = {
      {"refunds.md",
       "# Refund policy\n\nRefunds go to the original payment method within 14 days of receiving the returned "
       "item. Store credit is offered when the receipt is missing.\n",
       "how long until my refund arrives"},
      {"shipping.md",
       "# Shipping times\n\nStandard shipping takes 3 to 5 business days. Express shipping arrives the next "
       "business day when the order is placed before noon.\n",
       "when does express shipping arrive"},
      {"accounts/passwords.md",
       "# Resetting a password\n\nOpen the sign-in page, choose Forgot password and follow the link we email you. "
       "The link expires after 30 minutes.\n",
       "I forgot my password"},
      {"network/vpn.md",
       "# VPN setup\n\nThe office VPN gateway is vpn-eu-2.example.test. Use the WireGuard client with the profile "
       "from the IT portal.\n",
       "which gateway does the office VPN use"},
      {"printers.txt",
       "Printers\n\nThe third-floor printer is named ATLAS. Paper jams are cleared from the rear tray.\n",
       "name of the third floor printer"},
      {"warranty.md",
       "# Warranty\n\nEvery device carries a two-year warranty against manufacturing defects. Water damage is not "
       "covered.\n",
       "is water damage covered by the warranty"},
  };
  return docs;
}

// kb/ entries that must never be indexed (relative to the task directory), each holding the marker.
inline const char* const kWithheld[] = {
    "kb/grading.yaml", "kb/expected_answer.md", "kb/solution.md", "kb/reference.txt",
    "kb/tests/answers.md", "kb/.notes.md", "kb/answers.json",
};

// Writes the task into `dir`; returns its task.yaml. `extra` is appended to task.yaml (an
// environment block); `tools` replaces the agent's enabled list.
// clang-format off
inline std::string write_task(const std::string& dir, const std::string& extra = "",
                              const std::string& tools = "[search_kb]") {
  namespace fs = std::filesystem;
  const fs::path d(dir);
  const std::string m = kGradingMarker;
  put(d / "task.yaml",
      "task_id: kb_gateway\n"
      "name: \"Find the VPN gateway in the knowledge base\"\n"
      "category: helpdesk\n"
      "description: \"Search the help desk's knowledge base and tell the user the office VPN gateway.\"\n"
      "initial_user_message: \"Which gateway should I put into my VPN client for the office?\"\n"
      "max_turns: 30\n"
      "initial_state:\n"
      "  rag:\n"
      "    corpus_dir: kb\n"
      "tools:\n"
      "  agent:\n"
      "    enabled: " + tools + "\n"
      "  user:\n"
      "    enabled: []\n"
      "user_simulator:\n"
      "  mode: scripted\n"
      "  scripted_flow:\n"
      "    - {if_assistant_contains: \"vpn-eu-2\", user: \"Thanks. ###STOP###\"}\n"
      "    - {default: \"Could you look it up in the knowledge base?\"}\n"
      "grading: grading.yaml\n" + extra);
  put(d / "grading.yaml",
      "# " + m + "\n"
      "transcript_rules:\n"
      "  required_actions:\n"
      "    - {action_id: search, name: search_kb, arguments: {}, compare_args: []}\n"
      "  communicate_info: [\"vpn-eu-2.example.test\"]\n");
  for (const auto& doc : documents()) put(d / "kb" / doc.doc_id, doc.text);
  for (const char* w : kWithheld) put(d / w, "The office VPN gateway is " + m + ".example.test\n");
  put(d / "kb/diagram.png", "PNG VPN gateway " + m);  // not a document type
  fs::create_symlink("../grading.yaml", d / "kb/notes.md");  // a document name onto the grading file
  return (d / "task.yaml").string();
}
// clang-format on

}  // namespace forge::test::tf_rag
