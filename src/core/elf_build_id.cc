// Reading an ELF file's NT_GNU_BUILD_ID note through its program headers.
#include "core/elf_build_id.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <vector>

namespace forge {

namespace {

constexpr std::size_t kMaxHeaders = 256;          // program headers looked at
constexpr std::size_t kMaxNoteBytes = 64 * 1024;  // one PT_NOTE segment read

bool read_at(std::ifstream& in, std::uint64_t offset, void* out, std::size_t n) {
  in.seekg(static_cast<std::streamoff>(offset));
  return static_cast<bool>(in.read(static_cast<char*>(out), static_cast<std::streamsize>(n)));
}

std::string hex(const unsigned char* p, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += kHex[p[i] >> 4], out += kHex[p[i] & 15];
  return out;
}

std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

// The build ID among the notes of one PT_NOTE segment.
std::optional<std::string> build_id_in(const std::vector<unsigned char>& notes) {
  std::size_t at = 0;
  while (at + sizeof(Elf64_Nhdr) <= notes.size()) {
    Elf64_Nhdr h;
    std::memcpy(&h, notes.data() + at, sizeof h);
    const std::size_t name = at + sizeof h, desc = name + align4(h.n_namesz);
    if (desc > notes.size() || h.n_descsz > notes.size() - desc) return std::nullopt;
    if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 && std::memcmp(notes.data() + name, "GNU", 4) == 0 &&
        h.n_descsz > 0)
      return hex(notes.data() + desc, h.n_descsz);
    at = desc + align4(h.n_descsz);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> elf_build_id(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh;
  if (!in || !read_at(in, 0, &eh, sizeof eh)) return std::nullopt;
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > kMaxHeaders)
    return std::nullopt;
  for (std::size_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!read_at(in, eh.e_phoff + i * sizeof ph, &ph, sizeof ph)) return std::nullopt;
    if (ph.p_type != PT_NOTE || ph.p_filesz == 0 || ph.p_filesz > kMaxNoteBytes) continue;
    std::vector<unsigned char> notes(ph.p_filesz);
    if (!read_at(in, ph.p_offset, notes.data(), notes.size())) return std::nullopt;
    if (auto id = build_id_in(notes)) return id;
  }
  return std::nullopt;
}

}  // namespace forge
