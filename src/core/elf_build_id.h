// The GNU build ID of an ELF file: the linker's hash of the file's contents, kept in a note near
// its start. A binary's identity read in microseconds, where hashing a 70 MB forgectl takes a
// quarter of a second that every `forgectl up` would pay.
#pragma once

#include <optional>
#include <string>

namespace forge {

// Lower-case hex; nullopt when `path` is not a 64-bit ELF file or has no build ID note.
std::optional<std::string> elf_build_id(const std::string& path);

}  // namespace forge
