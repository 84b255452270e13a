// What mock-web may hold and serve: the page and asset file types, and the names never served.
// One definition for the host (what a trial copies into mock-web) and the server (what it answers).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace forge {

// The Content-Type of a page or asset file, by its name's extension (case-insensitive); nullopt
// for anything else (.py, .yaml, .md, .sh, no extension): such files are never copied or served.
std::optional<std::string> page_content_type(std::string_view file_name);

// Whether a page or asset type is a page or a static asset (html/htm, css, js/mjs, images, fonts,
// audio and video): every page_content_type but the data types (.json .txt .csv .xml .pdf .wasm).
// Only these are copied from a task directory itself (outside its www/ and mock_web/).
bool is_page_asset_type(std::string_view file_name);

// True for names mock-web never holds nor serves, at any depth (case-insensitive): task.yaml,
// grading.yaml (and .yml), tests, fixtures, checks.py, dot files (.env), anything starting with
// "expected" (expected.html, expected-output.json, Expected_out.json), anything containing
// "solution" (solution.py, reference_solution.txt), and "reference" as a whole first word
// (reference.txt, reference_answer.json, reference-output/; not references.html).
bool is_withheld_name(std::string_view name);

// Which of is_withheld_name's rules `name` meets, for a message ("its name starts with
// 'expected'"); nullopt when none does.
std::optional<std::string> withheld_name_rule(std::string_view name);

// A name usable as one segment of mock-web's /task/<category>/<task_id>/ route and as one
// directory name in its container: non-empty, at most 255 bytes, not "." or "..", and without
// '/', '\\' or NUL.
bool is_route_segment(std::string_view name);

}  // namespace forge
