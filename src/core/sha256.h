// SHA-256 (FIPS 180-4), small and dependency-free: state hashes must match Tolokaforge's hashlib.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace forge {

// Incremental hashing: update() any number of times, then digest() once.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  std::array<std::uint8_t, 32> digest();
  // Lower-case hex of digest(), as Python's hexdigest() prints it.
  std::string hex_digest();

 private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t buf_len_ = 0;
  std::uint64_t total_len_ = 0;  // bytes
};

// The lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace forge
