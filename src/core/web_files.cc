// Page types and withheld names (web_files.h).
#include "core/web_files.h"

#include "core/strings.h"

namespace forge {

std::optional<std::string> page_content_type(std::string_view file_name) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".htm", "text/html; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
      {".csv", "text/csv; charset=utf-8"},
      {".xml", "application/xml"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".webp", "image/webp"},
      {".ico", "image/x-icon"},
      {".woff", "font/woff"},
      {".woff2", "font/woff2"},
      {".avif", "image/avif"},
      {".bmp", "image/bmp"},
      {".ttf", "font/ttf"},
      {".otf", "font/otf"},
      {".mp3", "audio/mpeg"},
      {".wav", "audio/wav"},
      {".ogg", "audio/ogg"},
      {".mp4", "video/mp4"},
      {".webm", "video/webm"},
      {".wasm", "application/wasm"},
      {".pdf", "application/pdf"},
  };
  // The extension of the last component; a leading dot alone (".html") is a dot file, not a type.
  auto slash = file_name.find_last_of('/');
  std::string_view base = slash == std::string_view::npos ? file_name : file_name.substr(slash + 1);
  auto dot = base.find_last_of('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  std::string ext = to_lower(base.substr(dot));
  for (const auto& [e, type] : kTypes)
    if (ext == e) return std::string(type);
  return std::nullopt;
}

bool is_page_asset_type(std::string_view file_name) {
  // Data types (.json .txt .csv .xml .pdf .wasm) are what a server or a grader reads; a page
  // that needs one gets it from www/ or mock_web/, where the author put it for the web.
  static const char* const kData[] = {".json", ".txt", ".csv", ".xml", ".pdf", ".wasm"};
  if (!page_content_type(file_name)) return false;
  std::string n = to_lower(file_name);
  for (const char* ext : kData)
    if (n.ends_with(ext)) return false;
  return true;
}

bool is_withheld_name(std::string_view name) { return withheld_name_rule(name).has_value(); }

std::optional<std::string> withheld_name_rule(std::string_view name) {
  std::string n = to_lower(name);
  for (const char* exact : {"task.yaml", "task.yml", "grading.yaml", "grading.yml", "tests", "fixtures", "checks.py"})
    if (n == exact) return "it is named " + std::string(exact);
  if (starts_with(n, ".")) return std::string("it is a dot file");
  if (starts_with(n, "expected")) return std::string("its name starts with 'expected'");
  if (n.find("solution") != std::string::npos) return std::string("its name contains 'solution'");
  // "reference" as a whole first word: reference.txt, reference_answer.json, reference-output/;
  // not references.html or referenced.css.
  if (starts_with(n, "reference") && (n.size() == 9 || n[9] == '.' || n[9] == '_' || n[9] == '-'))
    return std::string("its name starts with the word 'reference'");
  return std::nullopt;
}

bool is_route_segment(std::string_view name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos;
}

}  // namespace forge
