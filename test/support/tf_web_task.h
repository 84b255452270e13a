// A Tolokaforge-format web task written for forgectl's tests (not copied from Tolokaforge): its
// pages in the task directory, in mock_web/ and in www/, reached through
// initial_state.mock_web.base_url on the built-in core stack, graded on a file the agent writes
// and on what it told the user. Every grading asset carries kGradingMarker, assembled so that no
// command line, tool argument or page holds it whole.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace forge::test::tf_web {

inline const std::string kMarkerHead = "TF-GRADING-";
inline const std::string kGradingMarker = kMarkerHead + "c41d";
inline constexpr const char* kCategory = "webshop";
inline constexpr const char* kTaskId = "order_lookup";
inline constexpr const char* kBaseUrl = "http://mock-web:8080/task/webshop/order_lookup/";
inline constexpr const char* kTracking = "TRK-5531-KX";     // on the task directory's orders/1187.html
inline constexpr const char* kCarrier = "Kestrel Freight";  // on www/carriers.html

inline void put(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// The page files mock-web's container holds for this task, relative to /srv: and nothing else.
inline const char* const kCopiedPages[] = {
    "www/index.html",
    "www/carriers.html",
    "task/webshop/order_lookup/index.html",
    "task/webshop/order_lookup/orders/1187.html",
    "task/webshop/order_lookup/mock_web/help.html",
    "task/webshop/order_lookup/styles/site.css",
};

// Writes the task into `dir` (which becomes the task directory); returns its task.yaml.
// The YAML keeps one line of the file per line of code.
// clang-format off
inline std::string write_task(const std::string& dir, const std::string& environment = "") {
  namespace fs = std::filesystem;
  const fs::path d(dir);
  const std::string m = kGradingMarker;
  put(d / "task.yaml",
      "# " + m + "\n"
      "task_id: order_lookup\n"
      "name: \"Look up an order's tracking code\"\n"
      "category: webshop\n"
      "description: \"Find order 1187 on the shop's site and report its tracking code and carrier.\"\n"
      "initial_user_message: \"The shop's order desk is at http://mock-web:8080/task/webshop/order_lookup/. Find the "
      "tracking code of order 1187, write it to tracking.txt (just the code) and tell me the code and the carrier.\"\n"
      "max_turns: 30\n"
      "initial_state:\n"
      "  mock_web:\n"
      "    base_url: \"http://mock-web:8080/task/webshop/order_lookup/\"\n"
      "tools:\n"
      "  agent:\n"
      "    enabled: [http_request, write_file]\n"
      "  user:\n"
      "    enabled: []\n"
      "user_simulator:\n"
      "  mode: scripted\n"
      "  scripted_flow:\n"
      "    - {default: \"Thanks. ###STOP###\"}\n"
      "grading: grading.yaml\n" +
          environment);
  put(d / "grading.yaml",
      "# " + m + "\n"
      "combine:\n"
      "  method: weighted\n"
      "  weights: {state_checks: 0.5, transcript_rules: 0.5}\n"
      "  pass_threshold: 1.0\n"
      "state_checks:\n"
      "  jsonpaths:\n"
      "    - {path_glob: \"/env/fs/agent-visible/tracking.txt\", contains: \"TRK-5531-KX\"}\n"
      "transcript_rules:\n"
      "  required_actions:\n"
      "    - action_id: open_order\n"
      "      name: http_request\n"
      "      arguments: {method: GET, url: \"http://mock-web:8080/task/webshop/order_lookup/orders/1187.html\"}\n"
      "      compare_args: [url]\n"
      "  communicate_info: [\"TRK-5531-KX\", \"Kestrel Freight\"]\n");
  // The task directory's pages (Tolokaforge serves them at /task/<category>/<task_id>/…).
  put(d / "index.html",
      "<h1>Order desk</h1><p>Open orders: <a href=\"orders/1187.html\">1187</a>. Carriers: "
      "<a href=\"/carriers.html\">list</a>. Help: <a href=\"/help.html\">help</a>.</p>");
  put(d / "orders/1187.html", "<h1>Order 1187</h1><p>Shipped with carrier K7. Tracking code: TRK-5531-KX.</p>");
  put(d / "mock_web/help.html", "<p>Carrier codes are listed on /carriers.html.</p>");
  put(d / "styles/site.css", "body { font-family: sans-serif; }");
  // The site's www/ (served at / and /<path>).
  put(d / "www/index.html", "<h1>Shop</h1><p>See the <a href=\"/task/webshop/order_lookup/\">order desk</a>.</p>");
  put(d / "www/carriers.html", "<table><tr><td>K7</td><td>Kestrel Freight</td></tr></table>");
  // Grading material and other task files, some of page types and some under page directories:
  // none of them may reach mock-web.
  put(d / "tests/expected.html", m);
  put(d / "tests/test.sh", "grep -q TRK-5531-KX tracking.txt # " + m + "\n");
  put(d / "solution.html", m);
  put(d / "solution/steps.txt", m);
  put(d / "expected_state.json", "{\"note\":\"" + m + "\"}");
  put(d / "fixtures/answers.json", "{\"note\":\"" + m + "\"}");
  put(d / "checks.py", "# " + m + "\n");
  put(d / ".notes.txt", m);
  put(d / "README.md", m);
  put(d / "mock_web/grading.yaml", m);
  put(d / "www/grading.yaml", m);
  put(d / "www/solution_notes.txt", m);
  put(d / "www/tests/answer.html", m);
  put(d / "www/server.py", m);
  return (d / "task.yaml").string();
}
// clang-format on

}  // namespace forge::test::tf_web
