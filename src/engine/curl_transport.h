// The real transport: libcurl over a unix socket or TCP (optionally TLS), keep-alive handles reused.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "engine/docker_host.h"
#include "engine/transport.h"

namespace forge::engine {

class CurlTransport final : public Transport {
 public:
  explicit CurlTransport(DockerHost host, Millis default_timeout = Millis(60000));
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  Result<Response> send(const Request& req) override;
  Result<Response> stream(const Request& req, const ChunkSink& sink) override;
  Result<std::unique_ptr<Stream>> hijack(const Request& req) override;
  std::string describe() const override { return host_.describe(); }
  bool is_local() const override { return host_.kind == DockerHost::Kind::kUnix; }

  // Number of new connections opened so far (keep-alive check in tests and benchmarks).
  long connects() const;

 private:
  struct Handle;  // a CURL* easy handle; idle ones keep their connection open
  std::unique_ptr<Handle> acquire();
  void release(std::unique_ptr<Handle> h);
  Result<Response> perform(const Request& req, const ChunkSink* sink);
  Error curl_error(int code, const char* detail, const Request& req) const;

  DockerHost host_;
  Millis default_timeout_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Handle>> idle_;
  long connects_ = 0;
};

}  // namespace forge::engine
