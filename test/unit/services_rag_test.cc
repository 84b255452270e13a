// The rag service without Docker: passages, titles and query words; BM25 ranking over a small
// knowledge base (the right document first, stems, titles, a long document's passage); every limit
// a clear refusal; and the HTTP routes behind their tokens — only the control token loads, an agent
// read token searches only its own trial, no token reaches anything but /health.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/json.h"
#include "core/limits.h"
#include "core/service_token.h"
#include "services/rag_http.h"
#include "services/rag_index.h"
#include "services/rag_text.h"

using namespace forge;
using namespace forge::services;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A help desk's knowledge base: each document answers one question, and shares everyday words with
// the others, so ranking has something to tell apart.
std::vector<RagDocument> help_desk() {
  return {
      {"refunds.md", "refunds.md", "",
       "# Refund policy\n\nRefunds are issued to the original payment method within 14 days of receiving the "
       "returned item. Store credit is offered when the receipt is missing."},
      {"shipping.md", "shipping.md", "",
       "# Shipping times\n\nStandard shipping takes 3 to 5 business days. Express shipping arrives the next "
       "business day when the order is placed before noon."},
      {"passwords.md", "passwords.md", "",
       "# Resetting a password\n\nOpen the sign-in page, choose 'Forgot password' and follow the link we email "
       "you. The link expires after 30 minutes."},
      {"warranty.txt", "warranty.txt", "",
       "Warranty\n\nEvery device carries a two-year warranty against manufacturing defects. Water damage is not "
       "covered by the warranty."},
      {"vpn.md", "vpn.md", "",
       "# VPN setup\n\nThe office gateway is vpn-eu-2.example.test. Use the WireGuard client and the profile "
       "from the IT portal."},
      {"printers.md", "printers.md", "",
       "# Printers\n\nThe third-floor printer is named ATLAS. Paper jams are cleared from the rear tray."},
      {"holidays.md", "holidays.md", "",
       "# Office holidays\n\nThe office is closed on public holidays. Support answers email within one business "
       "day."},
      {"returns.md", "returns.md", "",
       "# Returns\n\nItems can be returned within 30 days in their original packaging. Print the return label "
       "from your order page."},
  };
}

std::unique_ptr<RagIndex> build(std::vector<RagDocument> docs) {
  auto index = RagIndex::build(std::move(docs));
  REQUIRE_MESSAGE(index.has_value(), (index ? "" : index.error().what()));
  return std::move(*index);
}

std::vector<std::string> ids(const std::vector<RagHit>& hits) {
  std::vector<std::string> out;
  for (const auto& h : hits) out.push_back(h.doc_id);
  return out;
}

std::vector<RagHit> search(const RagIndex& index, const std::string& query, int top_k = 5) {
  auto hits = index.search(query, top_k);
  REQUIRE_MESSAGE(hits.has_value(), (hits ? "" : hits.error().what()));
  return *hits;
}

}  // namespace

TEST_CASE("rag text: a short document is one passage; a long one is cut at paragraphs, never past the limit") {
  CHECK(split_passages("  one short text \n") == std::vector<std::string>{"one short text"});
  CHECK(split_passages(" \n\t\n").empty());

  std::string para(300, 'a');
  std::string text;
  for (int i = 0; i < 20; ++i) text += "p" + std::to_string(i) + " " + para + "\n\n";
  auto parts = split_passages(text, 1000);
  REQUIRE(parts.size() > 1);
  std::string rejoined;
  for (const auto& p : parts) {
    CHECK(p.size() <= 1000);
    CHECK(p.rfind("p", 0) == 0);  // each starts at a paragraph
    rejoined += p + "\n\n";
  }
  CHECK(rejoined == text);  // nothing lost, nothing repeated

  // A heading opens a passage: each section keeps its own, even where two would fit in one.
  std::string sections = "# Guide\n\nintro " + std::string(40, 'i') + "\n\n## Alpha\n\nalpha " + std::string(40, 'a') +
                         "\n\n## Beta\n\nbeta " + std::string(40, 'b');
  auto by_heading = split_passages(sections, 120);
  REQUIRE(by_heading.size() == 3);
  CHECK(by_heading[1].rfind("## Alpha\n\nalpha", 0) == 0);
  CHECK(by_heading[2].rfind("## Beta\n\nbeta", 0) == 0);

  // A paragraph longer than the limit is cut at whitespace, and a word longer than the limit at a
  // character boundary: "é" is two bytes, so 7 bytes hold three of them and the cut falls before.
  auto words = split_passages(std::string(50, 'w') + " " + std::string(50, 'x'), 60);
  CHECK(words == std::vector<std::string>{std::string(50, 'w'), std::string(50, 'x')});
  std::string accents;
  for (int i = 0; i < 10; ++i) accents += "é";
  auto cut = split_passages(accents, 7);
  REQUIRE(cut.size() == 4);
  CHECK(cut[0] == "ééé");
  CHECK(cut[3] == "é");
}

TEST_CASE("rag text: a title is the first heading, else the first line, else the file name, cut to its limit") {
  CHECK(document_title("intro text\n## Refund policy ##\nbody", "x.md") == "Refund policy");
  CHECK(document_title("\n\n  Warranty terms  \nbody", "w.txt") == "Warranty terms");
  CHECK(document_title(" \n", "empty.md") == "empty.md");
  CHECK(document_title("#hashtag is no heading", "h.md") == "#hashtag is no heading");
  std::string long_line(300, 'y');
  CHECK(document_title(long_line, "l.md").size() == limits::kMaxRagTitleBytes);
  CHECK(utf8_prefix("aé", 2) == "a");
}

TEST_CASE("rag text: a query is its words, never FTS5 syntax; too long, too many words or none is refused") {
  auto t = query_terms("How do I RESET my password? How long does the reset link last");
  REQUIRE(t.has_value());
  CHECK(*t ==
        std::vector<std::string>{"how", "do", "i", "reset", "my", "password", "long", "does", "the", "link", "last"});
  // Column filters, NEAR, prefix stars, quotes and minus signs are only separators here.
  auto s = query_terms("title:secret NEAR(a b) pass* \"quoted\" -not ^start");
  REQUIRE(s.has_value());
  CHECK(*s == std::vector<std::string>{"title", "secret", "near", "a", "b", "pass", "quoted", "not", "start"});
  CHECK(match_expression({"a", "b"}) == "\"a\" OR \"b\"");

  auto huge = query_terms(std::string(limits::kMaxRagQueryBytes + 1, 'q'));
  REQUIRE_FALSE(huge.has_value());
  CHECK(huge.error().message == "the query is 1025 bytes, over the limit of 1024; ask with fewer words");
  std::string many;
  for (std::size_t i = 0; i <= limits::kMaxRagQueryTerms; ++i) many += "w" + std::to_string(i) + " ";
  auto wordy = query_terms(many);
  REQUIRE_FALSE(wordy.has_value());
  CHECK(has(wordy.error().message, "more than 64 distinct words"));
  auto none = query_terms(" ?! -- ");
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().message == "the query has no words to search for");
}

TEST_CASE("rag index: each question ranks the document that answers it first") {
  auto index = build(help_desk());
  CHECK(index->documents() == 8);
  struct Case {
    const char* query;
    const char* want;
  };
  for (auto c : std::vector<Case>{{"How long do refunds take?", "refunds.md"},
                                  {"when does express shipping arrive", "shipping.md"},
                                  {"I forgot my password, how do I reset it?", "passwords.md"},
                                  {"is water damage covered by the warranty", "warranty.txt"},
                                  {"what is the VPN gateway", "vpn.md"},
                                  {"name of the third-floor printer", "printers.md"},
                                  {"can I return an item after three weeks", "returns.md"}}) {
    CAPTURE(c.query);
    auto hits = search(*index, c.query);
    REQUIRE_FALSE(hits.empty());
    CHECK(hits[0].doc_id == c.want);
    for (std::size_t i = 1; i < hits.size(); ++i) CHECK(hits[i - 1].score >= hits[i].score);
  }
  // Porter stems: "refunded" finds "Refunds"; diacritics are folded: "café" finds "cafe".
  CHECK(search(*index, "refunded")[0].doc_id == "refunds.md");
  auto cafe = build({{"menu.md", "menu.md", "", "The cafe serves lunch."}, {"other.md", "other.md", "", "Nothing."}});
  CHECK(ids(search(*cafe, "café")) == std::vector<std::string>{"menu.md"});
  // A word no document holds finds nothing; top_k bounds the count.
  CHECK(search(*index, "zeppelin").empty());
  CHECK(search(*index, "the office business day", 2).size() == 2);
}

TEST_CASE("rag index: a hit carries its title, file name, a snippet and the passage that matched") {
  std::vector<RagDocument> docs = help_desk();
  // A long handbook whose one paragraph about the gateway sits deep inside.
  std::string filler;
  for (int i = 0; i < 40; ++i)
    filler += "Section " + std::to_string(i) + " of the handbook covers desks, chairs, lamps and other furniture.\n\n";
  docs.push_back({"handbook/office.md", "office.md", "",
                  "# Office handbook\n\n" + filler +
                      "Remote staff reach the lab through the bastion host "
                      "jump-7.example.test on port 2222.\n\n" +
                      filler});
  auto index = build(docs);
  CHECK(index->passages() > docs.size());
  auto hits = search(*index, "bastion host port");
  REQUIRE_FALSE(hits.empty());
  const RagHit& h = hits[0];
  CHECK(h.doc_id == "handbook/office.md");
  CHECK(h.source == "office.md");
  CHECK(h.title == "Office handbook");
  CHECK(h.score > 0);
  CHECK(h.text.size() <= limits::kMaxRagPassageBytes);
  CHECK(has(h.text, "jump-7.example.test on port 2222"));
  CHECK(has(h.snippet, "bastion"));
  CHECK(h.snippet.size() < h.text.size());
  // One result per document, however many of its passages match.
  auto furniture = search(*index, "chairs lamps furniture", 5);
  CHECK(ids(furniture) == std::vector<std::string>{"handbook/office.md"});
}

TEST_CASE("rag index: a corpus past a limit, an empty one, a repeated id or an empty document is refused") {
  auto refused = [](std::vector<RagDocument> docs) {
    auto r = RagIndex::build(std::move(docs));
    REQUIRE_FALSE(r.has_value());
    return r.error().message;
  };
  CHECK(refused({}) == "the corpus has no documents");
  std::vector<RagDocument> many(limits::kMaxRagDocuments + 1, {"", "", "", "x"});
  for (std::size_t i = 0; i < many.size(); ++i) many[i].doc_id = "d" + std::to_string(i);
  CHECK(refused(many) == "the corpus has 2001 documents, over the limit of 2000");
  std::string half(limits::kMaxRagCorpusBytes / 2 + 1, 'a');
  CHECK(has(refused({{"a", "a", "", half}, {"b", "b", "", half}}),
            "add up to more than 16.0 MiB (the limit), at document 'b'"));
  CHECK(refused({{"a", "a", "", "x"}, {"a", "a", "", "y"}}) == "doc_id 'a' is given twice");
  CHECK(refused({{"a", "a", "", " \n "}}) == "document 'a' has no text");

  auto index = build(help_desk());
  for (int k : {0, limits::kMaxRagTopK + 1}) {
    auto r = index->search("refund", k);
    REQUIRE_FALSE(r.has_value());
    CHECK(has(r.error().message, "top_k must be between 1 and 20"));
  }
}

namespace {

const std::string kControl(64, 'c');

Request post(const std::string& path, const std::string& body, const std::string& token) {
  Request r;
  r.method = "POST";
  r.target = r.path = path;
  r.body = body;
  if (!token.empty()) r.headers.emplace_back("Authorization", "Bearer " + token);
  return r;
}

std::string index_body(const std::vector<RagDocument>& docs) {
  json::Writer w;
  w.begin_object().field("domain_name", "help").key("documents").begin_array();
  for (const auto& d : docs) w.begin_object().field("doc_id", d.doc_id).field("text", d.text).end_object();
  return w.end_array().end_object().take();
}

json::Document parsed(const Response& r) {
  auto doc = json::parse(r.body, "reply");
  REQUIRE(doc.has_value());
  return std::move(*doc);
}

}  // namespace

TEST_CASE("rag service: the control token loads a trial's index once; its read token searches it and nothing else") {
  RagStore store;
  auto auth = JsonDbAuth::with_control_token(kControl, "rag");
  REQUIRE(auth.has_value());
  Handler h = rag_handler(store, *auth);
  const std::string read = agent_token(kControl, "t_0", TokenPermission::kRead);
  const std::string body = index_body(help_desk());

  // No token, a forged one, json-db's read token of the same stack: 401, nothing loaded.
  const std::string json_db_control(64, 'd');
  for (const std::string& t :
       {std::string(), std::string(64, 'e'), agent_token(json_db_control, "t_0", TokenPermission::kRead)}) {
    Response r = h(post("/trials/t_0/index", body, t));
    CHECK(r.status == 401);
    CHECK(has(r.headers.at(0).second, "realm=\"rag\""));
  }
  // The trial's own read and write tokens may not load or delete an index.
  for (auto perm : {TokenPermission::kRead, TokenPermission::kWrite}) {
    CHECK(h(post("/trials/t_0/index", body, agent_token(kControl, "t_0", perm))).status == 403);
    Request del = post("/trials/t_0/index", "", agent_token(kControl, "t_0", perm));
    del.method = "DELETE";
    CHECK(h(del).status == 403);
  }
  CHECK(store.count() == 0);

  Response loaded = h(post("/trials/t_0/index", body, kControl));
  REQUIRE(loaded.status == 200);
  auto l = parsed(loaded);
  CHECK(json::get_int(l, "documents_indexed") == 8);
  CHECK(json::get_string(l, "index_id").rfind("t_0_", 0) == 0);
  // Loaded once: the control token itself cannot add to it later.
  Response again =
      h(post("/trials/t_0/index", index_body({{"planted.md", "", "", "The VPN gateway is evil.example"}}), kControl));
  CHECK(again.status == 409);

  Response found =
      h(post("/trials/t_0/search", R"({"query": "what is the VPN gateway", "top_k": 3, "alpha": 0.5})", read));
  REQUIRE(found.status == 200);
  auto f = parsed(found);
  const auto* results = json::get_array(f, "results");
  REQUIRE(results != nullptr);
  REQUIRE(results->Size() >= 1);
  CHECK(json::get_string((*results)[0], "doc_id") == "vpn.md");
  CHECK(json::get_string((*results)[0], "source") == "vpn.md");
  CHECK(json::get_string((*results)[0], "title") == "VPN setup");
  CHECK(json::get_string((*results)[0], "retrieval_method") == "bm25");
  CHECK(json::get_int(f, "total_results") == static_cast<std::int64_t>(results->Size()));
  CHECK(!has(found.body, "evil.example"));

  // The read token of one trial does not search another's; bad requests say what is wrong.
  CHECK(h(post("/trials/t_1/search", R"({"query": "vpn"})", read)).status == 403);
  CHECK(h(post("/trials/t_1/search", R"({"query": "vpn"})", kControl)).status == 404);
  Response huge = h(post("/trials/t_0/search", "{\"query\": \"" + std::string(5000, 'q') + "\"}", read));
  CHECK(huge.status == 400);
  CHECK(has(huge.body, "the query is 5000 bytes, over the limit of 1024"));
  CHECK(has(h(post("/trials/t_0/search", R"({"query": "vpn", "top_k": 50})", read)).body,
            "top_k must be between 1 and 20"));
  CHECK(has(h(post("/trials/t_0/search", R"({"query": "vpn", "limit": 2})", read)).body, "unknown key 'limit'"));
  CHECK(has(h(post("/trials/t_0/search", R"({"query": "vpn", "alpha": 2})", read)).body,
            "alpha must be a number from 0 to 1"));

  // The health check is open, and says how it ranks.
  Request health;
  health.method = "GET";
  health.target = health.path = "/health";
  Response hr = h(health);
  CHECK(hr.status == 200);
  CHECK(has(hr.body, "\"retrieval\":\"bm25\""));
  CHECK(has(hr.body, "\"active_indices\":1"));
}

TEST_CASE("rag service: at most kMaxRagIndexes indexes; a deleted one frees its place") {
  RagStore store;
  const std::string body = index_body(help_desk());
  auto doc = json::parse(body, "body");
  REQUIRE(doc.has_value());
  for (std::size_t i = 0; i < limits::kMaxRagIndexes; ++i)
    CHECK(store.index("t_" + std::to_string(i), *doc).has_value());
  auto full = store.index("t_more", *doc);
  REQUIRE_FALSE(full.has_value());
  CHECK(full.error().code == Errc::kServer);  // 507
  CHECK(has(full.error().message, "holds 4 indexes, its limit"));
  CHECK(store.remove("t_0").has_value());
  CHECK(store.index("t_more", *doc).has_value());
  CHECK(store.remove("t_0").error().code == Errc::kNotFound);
}
