// In-memory tar archives (libarchive) for Docker's archive API and image build contexts.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

struct archive;

namespace forge::engine {

enum class EntryType { kFile, kDirectory, kSymlink };

struct TarEntry {
  std::string path;          // as stored in the archive (directories usually end in '/')
  EntryType type = EntryType::kFile;
  unsigned mode = 0644;     // permission bits (07777 mask)
  std::string content;      // files only
  std::string link_target;  // symlinks only
  long long mtime = 0;      // seconds since epoch
  unsigned uid = 0, gid = 0;
};

// Builds a pax-restricted (ustar-compatible) tar in memory. Entries get mtime 0 and uid/gid 0
// unless given, so identical inputs give identical bytes (Docker's build cache relies on it).
// After an error that leaves the archive half-written, every later call fails with that error.
class TarWriter {
 public:
  TarWriter();
  ~TarWriter();
  TarWriter(TarWriter&&) noexcept;
  TarWriter& operator=(TarWriter&&) noexcept;
  TarWriter(const TarWriter&) = delete;
  TarWriter& operator=(const TarWriter&) = delete;

  // Paths must be relative, non-empty and free of ".." components (Errc::kInvalid otherwise).
  Status add_file(std::string_view path, std::string_view content, unsigned mode = 0644);
  Status add_directory(std::string_view path, unsigned mode = 0755);
  Status add_symlink(std::string_view path, std::string_view target);
  Status add_entry(const TarEntry& e);
  // Adds a host regular file (symlinks followed) under `path`, keeping its permission bits;
  // streamed, not loaded whole. Missing file: kNotFound; not a regular file: kInvalid; else kIo.
  Status add_host_file(std::string_view path, const std::string& host_path);
  // Closes the archive and returns its bytes; the writer is spent afterwards.
  Result<std::string> finish();

 private:
  struct ArchiveFree {
    void operator()(archive* a) const;
  };

  // One entry is begin_entry (checks the path, writes the header; `meta.content` is ignored
  // in favour of `size`), write_data any number of times, then end_entry.
  Status begin_entry(const TarEntry& meta, long long size);
  Status write_data(std::string_view path, std::string_view data);
  Status end_entry(std::string_view path);
  Status add(const TarEntry& meta, std::string_view content);
  Status usable() const;
  Status broken(Error e);  // records e as the writer's final state and returns it

  // Heap-held so its address, given to libarchive's write callback, survives moves.
  // Declared before handle_ so it outlives the handle (freeing the handle may still write).
  std::unique_ptr<std::string> out_;
  std::unique_ptr<archive, ArchiveFree> handle_;
  std::optional<Error> error_;  // set once the archive is half-written and unusable
};

// All entries, in archive order; paths are not checked (validate before extracting to disk).
// Plain (uncompressed) tar only. Hard links to earlier files come back as copies of those
// files; sparse files and other entry types (devices, fifos) are rejected with Errc::kInvalid.
Result<std::vector<TarEntry>> read_tar(std::string_view bytes);

// The content of the one regular file in the archive (what GET archive of a file returns);
// Errc::kInvalid if there is none or more than one.
Result<std::string> read_single_file(std::string_view bytes);

}  // namespace forge::engine
