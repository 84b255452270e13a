// A passive capture on every interface of the host's network namespace (the Docker bridges, every
// container's veth end, the host's own links) of UDP datagrams to or from port 53 that carry a
// marker: where the DNS queries holding a test's unique label went. Root only (AF_PACKET).
#pragma once

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace forge::test {

class DnsCapture {
 public:
  explicit DnsCapture(std::string marker) : marker_(std::move(marker)) {
    fd_ = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
    REQUIRE_MESSAGE(fd_ >= 0, "AF_PACKET needs root");
    thread_ = std::thread([this] { loop(); });
  }
  ~DnsCapture() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  // The destinations of queries carrying the marker ("10.231.0.30"), as seen so far.
  std::set<std::string> destinations() {
    std::lock_guard lock(mu_);
    return dst_;
  }

 private:
  void loop() {
    char buf[2048];
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      sockaddr_ll from{};
      socklen_t len = sizeof from;
      ssize_t n = ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n > 0) take(std::string_view(buf, static_cast<std::size_t>(n)), from.sll_hatype);
    }
  }
  // Ethernet (veth, bridges) or none at all (tunnels): IPv4, then UDP to port 53.
  void take(std::string_view frame, unsigned short hatype) {
    std::size_t ip = hatype == 1 ? 14 : 0;  // ARPHRD_ETHER
    if (frame.size() < ip + 28 || (static_cast<unsigned char>(frame[ip]) >> 4) != 4) return;
    if (frame[ip + 9] != 17) return;  // UDP
    std::size_t udp = ip + (static_cast<unsigned char>(frame[ip]) & 0xf) * 4u;
    if (frame.size() < udp + 8) return;
    unsigned dport = (static_cast<unsigned char>(frame[udp + 2]) << 8) | static_cast<unsigned char>(frame[udp + 3]);
    if (dport != 53 || frame.substr(udp + 8).find(marker_) == std::string_view::npos) return;
    char dst[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, frame.data() + ip + 16, dst, sizeof dst);
    std::lock_guard lock(mu_);
    dst_.insert(dst);
  }

  std::string marker_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::set<std::string> dst_;
  std::thread thread_;
};

}  // namespace forge::test
