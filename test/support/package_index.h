// The fake package index of the egress tests: an upstream service (x-forgectl: {upstream: true},
// the "internet" of a limited_internet task) answering as pkgs.example.test with busybox httpd.
#pragma once

#include <string>

namespace forge::test {

// compose.yaml with the index; `also`: more of its shell command, before httpd starts
// (" && echo 2.3.1 > /tmp/w/solution/answer.txt"), `dirs`: more directories under /tmp/w.
inline std::string package_index_compose(const std::string& dirs = "", const std::string& also = "") {
  return "services:\n"
         "  package-index:\n"
         "    image: forgectl/runner:local\n"
         "    x-forgectl: {upstream: true}\n"
         "    networks:\n      default:\n        aliases: [pkgs.example.test]\n"
         "    command:\n      - sh\n      - -c\n"
         "      - mkdir -p /tmp/w/simple" + dirs + " && echo acme-cli > /tmp/w/simple/index.html" + also +
         " && exec httpd -f -p 80 -h /tmp/w\n";
}

}  // namespace forge::test
