// In-memory tar archives (libarchive) for Docker's archive API and image build contexts.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
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
  // Adds the regular file open at `fd` (read from its current offset, streamed) with `meta`'s
  // path, mode, owner and mtime; its size is the file's at the time of the call.
  Status add_fd(const TarEntry& meta, int fd);
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
  Status stream_file(const TarEntry& meta, int fd, long long size, const std::string& shown);
  Status usable() const;
  Status broken(Error e);  // records e as the writer's final state and returns it

  // Heap-held so its address, given to libarchive's write callback, survives moves.
  // Declared before handle_ so it outlives the handle (freeing the handle may still write).
  std::unique_ptr<std::string> out_;
  std::unique_ptr<archive, ArchiveFree> handle_;
  std::optional<Error> error_;  // set once the archive is half-written and unusable
};

// Pulls archive bytes: fills `buf`, returns how many, 0 at the end.
using TarSource = std::function<Result<std::size_t>(std::span<char> buf)>;
// Takes archive bytes as they are produced.
using TarSink = std::function<Status(std::string_view bytes)>;

// An entry's header, as a streaming reader sees it before (or instead of) its data.
struct TarHeader {
  std::string path;
  EntryType type = EntryType::kFile;  // a hard link is a kFile with `hardlink` set
  unsigned mode = 0, uid = 0, gid = 0;
  std::uint64_t size = 0;   // files: the data's length (0 for a hard link)
  std::string link_target;  // symlinks
  std::string hardlink;     // hard links: the earlier entry whose data this is
};

// What a streaming reader does with one entry: keep the first `bytes` bytes of a file's data
// (the rest is read past, never held), or stop reading the archive here.
struct TarKeep {
  std::size_t bytes = 0;
  bool stop = false;
};

// How much a copy may carry: the files' sizes as the archive declares them (a sparse file counts
// its whole length: the copy is written dense). 0: no limit.
struct TarBudget {
  std::uint64_t file_bytes = 0;
  std::size_t entries = 0;           // entries of any kind (empty files cost inodes, not bytes); 0: no limit
  std::string what = "the archive";  // named in the error: "the workspace"
};

// Reads a plain tar from `source` one entry at a time. `want` sees every file, directory and
// symlink (other types are passed over); for a file it chose to keep, `got` receives its first
// min(size, keep) bytes. Memory is bounded by what `want` asks for, whatever the archive holds.
// Errors of `want`/`got` stop the reading and are returned; a malformed archive is kInvalid; an
// archive past `budget` stops at that entry's header (kExceeded).
Status read_tar_stream(const TarSource& source, const std::function<TarKeep(const TarHeader&)>& want,
                       const std::function<Status(const TarHeader&, std::string data)>& got,
                       const TarBudget& budget = {});

struct TarOwner {
  unsigned uid = 0, gid = 0;
};
// Copies a tar from `source` to `sink` entry by entry, never holding a whole file: every entry
// is owned by `owner` (user and group names dropped), setuid/setgid bits are cleared, extended
// attributes, ACLs, file flags and sparse maps are dropped, and device nodes are left out. Files
// past `budget` stop the copy before their data is read: kExceeded. `tail`, a tar of our own, is
// appended after the source's entries as it is (owners kept, outside the budget): what must be
// extracted last goes in the same extraction.
Status rewrite_tar_stream(const TarSource& source, const TarSink& sink, TarOwner owner, const TarBudget& budget = {},
                          std::string_view tail = {});

// All entries, in archive order; paths are not checked (validate before extracting to disk).
// Plain (uncompressed) tar only. Hard links to earlier files come back as copies of those
// files; sparse files and other entry types (devices, fifos) are rejected with Errc::kInvalid.
Result<std::vector<TarEntry>> read_tar(std::string_view bytes);

// One archive of every entry of `tars`, in their order: one extraction where there were several
// (the daemon re-executes itself for each PUT archive, ~0.1-0.2 s apiece here).
Result<std::string> concat_tars(const std::vector<std::string>& tars);

// The content of the one regular file in the archive (what GET archive of a file returns);
// Errc::kInvalid if there is none or more than one.
Result<std::string> read_single_file(std::string_view bytes);

}  // namespace forge::engine
