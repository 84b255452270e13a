// In-memory tar writing and reading on top of libarchive.
#include "engine/tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <optional>
#include <system_error>
#include <vector>

namespace forge::engine {
namespace {

constexpr size_t kHostChunk = 256 * 1024;

struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};
struct ReadFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
using EntryPtr = std::unique_ptr<archive_entry, EntryFree>;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string archive_message(archive* a) {
  const char* m = a ? archive_error_string(a) : nullptr;
  return m ? m : "unknown libarchive error";
}

std::string errno_message(int err) { return std::system_category().message(err); }

// libarchive calls this with each chunk of output; exceptions must not cross its C frames.
la_ssize_t append_output(archive* a, void* client, const void* buf, size_t len) {
  try {
    static_cast<std::string*>(client)->append(static_cast<const char*>(buf), len);
  } catch (const std::bad_alloc&) {
    archive_set_error(a, ENOMEM, "out of memory");
    return -1;
  }
  return static_cast<la_ssize_t>(len);
}

// Rejects paths that could land outside the extraction directory or be cut short at a NUL.
Status check_path(std::string_view path) {
  if (path.empty()) return fail(Errc::kInvalid, "tar entry path is empty");
  if (path.find('\0') != std::string_view::npos)
    return fail(Errc::kInvalid, "tar entry path " + quoted(path) + " contains a nul byte");
  if (path.front() == '/') return fail(Errc::kInvalid, "tar entry path " + quoted(path) + " is absolute");
  for (size_t start = 0; start <= path.size();) {
    size_t end = std::min(path.find('/', start), path.size());
    if (path.substr(start, end - start) == "..")
      return fail(Errc::kInvalid, "tar entry path " + quoted(path) + " contains a '..' component");
    start = end + 1;
  }
  return {};
}

std::string utf8_or_raw(const char* utf8, const char* raw) {
  // The UTF-8 view is NULL when the locale cannot convert the stored bytes; keep them as-is.
  return utf8 ? utf8 : raw ? raw : "";
}

const char* type_name(mode_t type) {
  switch (type) {
    case AE_IFCHR: return "character device";
    case AE_IFBLK: return "block device";
    case AE_IFIFO: return "fifo";
    case AE_IFSOCK: return "socket";
    default: return "unknown type";
  }
}

// Reads the current entry's data; `limit` bounds the reservation so a lying header cannot
// make us allocate more than the archive could hold.
Result<std::string> read_content(archive* a, const std::string& path, size_t limit) {
  std::string content;
  const void* buf = nullptr;
  size_t len = 0;
  la_int64_t offset = 0;
  content.reserve(limit);
  for (;;) {
    int r = archive_read_data_block(a, &buf, &len, &offset);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN)
      return fail(Errc::kInvalid, "reading tar entry " + quoted(path) + ": " + archive_message(a));
    if (offset != static_cast<la_int64_t>(content.size()))
      return fail(Errc::kInvalid, "reading tar entry " + quoted(path) + ": data is not contiguous");
    content.append(static_cast<const char*>(buf), len);
  }
  return content;
}

// Header-only metadata (no content); set field by field since GCC's -Wextra flags partial
// designated initialisers.
TarEntry meta_for(std::string_view path, EntryType type, unsigned mode) {
  TarEntry meta;
  meta.path = path;
  meta.type = type;
  meta.mode = mode;
  return meta;
}

struct WriteFree {
  void operator()(archive* a) const { archive_write_free(a); }
};

constexpr size_t kStreamChunk = 64 * 1024;

// libarchive's read callback over a TarSource; the source's own error is kept for the caller.
struct SourceReader {
  const TarSource& source;
  std::vector<char> buf = std::vector<char>(kStreamChunk);
  std::optional<Error> error;

  static la_ssize_t read(archive* a, void* self, const void** out) {
    auto* r = static_cast<SourceReader*>(self);
    try {
      auto n = r->source(std::span<char>(r->buf.data(), r->buf.size()));
      if (!n) {
        r->error = n.error();
        archive_set_error(a, EIO, "the archive stream failed");
        return -1;
      }
      *out = r->buf.data();
      return static_cast<la_ssize_t>(std::min(*n, r->buf.size()));
    } catch (const std::exception& e) {
      r->error = make_error(Errc::kIo, std::string("reading the archive stream: ") + e.what());
      archive_set_error(a, EIO, "the archive stream failed");
      return -1;
    }
  }
};

// libarchive's write callback into a TarSink.
struct SinkWriter {
  const TarSink& sink;
  std::optional<Error> error;

  static la_ssize_t write(archive* a, void* self, const void* buf, size_t len) {
    auto* w = static_cast<SinkWriter*>(self);
    try {
      if (auto st = w->sink(std::string_view(static_cast<const char*>(buf), len)); !st) {
        w->error = st.error();
        archive_set_error(a, EIO, "the archive's destination failed");
        return -1;
      }
    } catch (const std::exception& e) {
      w->error = make_error(Errc::kIo, std::string("writing the archive stream: ") + e.what());
      archive_set_error(a, EIO, "the archive's destination failed");
      return -1;
    }
    return static_cast<la_ssize_t>(len);
  }
};

using ReadPtr = std::unique_ptr<archive, ReadFree>;

Result<ReadPtr> open_source(SourceReader& r) {
  ReadPtr a(archive_read_new());
  if (!a) return fail(Errc::kIo, "creating tar reader: out of memory");
  archive_read_support_format_tar(a.get());
  archive_read_support_format_empty(a.get());
  if (archive_read_open(a.get(), &r, nullptr, SourceReader::read, nullptr) != ARCHIVE_OK) {
    if (r.error) return fail(*r.error);
    return fail(Errc::kInvalid, "opening tar archive: " + archive_message(a.get()));
  }
  return a;
}

// Why a libarchive read call failed: the source's own error when the source failed.
Error read_error(const SourceReader& r, archive* a, const std::string& what) {
  if (r.error) return *r.error;
  return make_error(Errc::kInvalid, what + ": " + archive_message(a));
}

std::string header_context(const std::string& last) {
  return last.empty() ? "reading the first tar header" : "reading the tar header after " + quoted(last);
}

TarHeader header_of(archive_entry* e) {
  TarHeader h;
  h.path = utf8_or_raw(archive_entry_pathname_utf8(e), archive_entry_pathname(e));
  h.mode = static_cast<unsigned>(archive_entry_perm(e)) & 07777;
  h.uid = static_cast<unsigned>(archive_entry_uid(e));
  h.gid = static_cast<unsigned>(archive_entry_gid(e));
  h.size =
      archive_entry_size_is_set(e) ? static_cast<std::uint64_t>(std::max<la_int64_t>(archive_entry_size(e), 0)) : 0;
  mode_t type = archive_entry_filetype(e);
  if (const char* hard = archive_entry_hardlink(e)) {
    h.type = EntryType::kFile;
    h.hardlink = utf8_or_raw(archive_entry_hardlink_utf8(e), hard);
  } else if (type == AE_IFDIR) {
    h.type = EntryType::kDirectory;
  } else if (type == AE_IFLNK) {
    h.type = EntryType::kSymlink;
    h.link_target = utf8_or_raw(archive_entry_symlink_utf8(e), archive_entry_symlink(e));
  }
  return h;
}

}  // namespace

void TarWriter::ArchiveFree::operator()(archive* a) const { archive_write_free(a); }

TarWriter::TarWriter() : out_(std::make_unique<std::string>()) {
  handle_.reset(archive_write_new());
  if (!handle_) {
    error_ = make_error(Errc::kIo, "creating tar writer: out of memory");
    return;
  }
  archive* a = handle_.get();
  // Block size 0: no re-blocking, so large content reaches append_output without extra copies
  // and the output is not padded to 10 KiB.
  if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
      archive_write_set_bytes_per_block(a, 0) != ARCHIVE_OK ||
      archive_write_open2(a, out_.get(), nullptr, append_output, nullptr, nullptr) != ARCHIVE_OK)
    error_ = make_error(Errc::kIo, "creating tar writer: " + archive_message(a));
}

TarWriter::~TarWriter() = default;
TarWriter::TarWriter(TarWriter&& o) noexcept { *this = std::move(o); }

TarWriter& TarWriter::operator=(TarWriter&& o) noexcept {
  if (this == &o) return *this;
  handle_.reset();  // first: freeing a handle still writes into its out_
  out_ = std::move(o.out_);
  handle_ = std::move(o.handle_);
  error_ = std::move(o.error_);
  o.error_.reset();  // the moved-from writer reports "already finished"
  return *this;
}

Status TarWriter::usable() const {
  if (error_) return fail(*error_);
  if (!handle_) return fail(Errc::kInvalid, "tar writer is already finished");
  return {};
}

Status TarWriter::broken(Error e) {
  error_ = e;
  return fail(std::move(e));
}

Status TarWriter::begin_entry(const TarEntry& meta, long long size) {
  if (auto s = usable(); !s) return s;
  if (auto s = check_path(meta.path); !s) return s;
  if (meta.type == EntryType::kSymlink) {
    if (meta.link_target.empty() || meta.link_target.find('\0') != std::string::npos)
      return fail(Errc::kInvalid, "symlink " + quoted(meta.path) + " has an empty or nul-containing target");
  }
  EntryPtr e(archive_entry_new2(handle_.get()));
  if (!e) return broken(make_error(Errc::kIo, "writing tar entry " + quoted(meta.path) + ": out of memory"));
  archive_entry_copy_pathname(e.get(), meta.path.c_str());
  switch (meta.type) {
    case EntryType::kFile:
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_size(e.get(), size);
      break;
    case EntryType::kDirectory: archive_entry_set_filetype(e.get(), AE_IFDIR); break;
    case EntryType::kSymlink:
      archive_entry_set_filetype(e.get(), AE_IFLNK);
      archive_entry_copy_symlink(e.get(), meta.link_target.c_str());
      break;
  }
  archive_entry_set_perm(e.get(), meta.mode & 07777);
  archive_entry_set_mtime(e.get(), meta.mtime, 0);
  archive_entry_set_uid(e.get(), meta.uid);
  archive_entry_set_gid(e.get(), meta.gid);
  int r = archive_write_header(handle_.get(), e.get());
  std::string msg = "writing tar entry " + quoted(meta.path) + ": ";
  if (r == ARCHIVE_FAILED)
    return fail(Errc::kInvalid, msg + archive_message(handle_.get()));  // entry skipped
  if (r < ARCHIVE_WARN) return broken(make_error(Errc::kIo, msg + archive_message(handle_.get())));
  return {};
}

Status TarWriter::write_data(std::string_view path, std::string_view data) {
  while (!data.empty()) {
    la_ssize_t n = archive_write_data(handle_.get(), data.data(), data.size());
    if (n <= 0)
      return broken(
          make_error(Errc::kIo, "writing tar entry " + quoted(path) + ": " + archive_message(handle_.get())));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

Status TarWriter::end_entry(std::string_view path) {
  if (archive_write_finish_entry(handle_.get()) < ARCHIVE_WARN)
    return broken(
        make_error(Errc::kIo, "writing tar entry " + quoted(path) + ": " + archive_message(handle_.get())));
  return {};
}

Status TarWriter::add(const TarEntry& meta, std::string_view content) {
  if (auto s = begin_entry(meta, static_cast<long long>(content.size())); !s) return s;
  if (auto s = write_data(meta.path, content); !s) return s;
  return end_entry(meta.path);
}

Status TarWriter::add_file(std::string_view path, std::string_view content, unsigned mode) {
  return add(meta_for(path, EntryType::kFile, mode), content);
}

Status TarWriter::add_directory(std::string_view path, unsigned mode) {
  return add(meta_for(path, EntryType::kDirectory, mode), {});
}

Status TarWriter::add_symlink(std::string_view path, std::string_view target) {
  TarEntry meta = meta_for(path, EntryType::kSymlink, 0777);
  meta.link_target = target;
  return add(meta, {});
}

Status TarWriter::add_entry(const TarEntry& e) {
  return add(e, e.type == EntryType::kFile ? std::string_view(e.content) : std::string_view());
}

Status TarWriter::add_host_file(std::string_view path, const std::string& host_path) {
  if (auto s = usable(); !s) return s;
  if (auto s = check_path(path); !s) return s;
  // O_NONBLOCK keeps a fifo from blocking the open; it has no effect on regular files.
  Fd file{::open(host_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) {
    int err = errno;
    return fail(err == ENOENT ? Errc::kNotFound : Errc::kIo,
                "opening " + quoted(host_path) + ": " + errno_message(err));
  }
  struct stat st {};
  if (::fstat(file.fd, &st) != 0)
    return fail(Errc::kIo, "reading " + quoted(host_path) + ": " + errno_message(errno));
  if (!S_ISREG(st.st_mode)) return fail(Errc::kInvalid, quoted(host_path) + " is not a regular file");

  TarEntry meta = meta_for(path, EntryType::kFile, static_cast<unsigned>(st.st_mode & 07777));
  return stream_file(meta, file.fd, st.st_size, host_path);
}

Status TarWriter::add_fd(const TarEntry& meta, int fd) {
  if (auto s = usable(); !s) return s;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(Errc::kIo, "reading " + quoted(meta.path) + ": " + errno_message(errno));
  if (!S_ISREG(st.st_mode)) return fail(Errc::kInvalid, quoted(meta.path) + " is not a regular file");
  return stream_file(meta, fd, st.st_size, meta.path);
}

Status TarWriter::stream_file(const TarEntry& meta_in, int fd, long long size, const std::string& shown) {
  TarEntry meta = meta_in;
  meta.type = EntryType::kFile;
  if (auto s = begin_entry(meta, size); !s) return s;
  // Streamed in chunks so a large file never sits in memory twice.
  std::string chunk(static_cast<size_t>(std::min<long long>(size, kHostChunk)), '\0');
  for (long long left = size; left > 0;) {
    ssize_t n = ::read(fd, chunk.data(), static_cast<size_t>(std::min<long long>(left, chunk.size())));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return broken(make_error(Errc::kIo, "reading " + quoted(shown) + ": " + errno_message(errno)));
    if (n == 0) return broken(make_error(Errc::kIo, quoted(shown) + " shrank while being archived"));
    if (auto s = write_data(meta.path, std::string_view(chunk.data(), static_cast<size_t>(n))); !s) return s;
    left -= n;
  }
  return end_entry(meta.path);
}

Result<std::string> TarWriter::finish() {
  if (auto s = usable(); !s) return s.fail();
  if (archive_write_close(handle_.get()) != ARCHIVE_OK)
    return broken(make_error(Errc::kIo, "closing tar archive: " + archive_message(handle_.get()))).fail();
  handle_.reset();
  std::string bytes = std::move(*out_);
  out_.reset();
  return bytes;
}

Result<std::vector<TarEntry>> read_tar(std::string_view bytes) {
  std::unique_ptr<archive, ReadFree> holder(archive_read_new());
  archive* a = holder.get();
  if (!a) return fail(Errc::kIo, "creating tar reader: out of memory");
  // Plain tar only (what the Docker archive API returns); "empty" accepts a zero-byte input.
  archive_read_support_format_tar(a);
  archive_read_support_format_empty(a);
  static const char kNothing = 0;
  if (archive_read_open_memory(a, bytes.empty() ? &kNothing : bytes.data(), bytes.size()) != ARCHIVE_OK)
    return fail(Errc::kInvalid, "opening tar archive: " + archive_message(a));

  std::vector<TarEntry> entries;
  for (;;) {
    archive_entry* e = nullptr;
    int r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) {
      std::string where =
          entries.empty() ? "first tar header" : "tar header after " + quoted(entries.back().path);
      return fail(Errc::kInvalid, "reading " + where + ": " + archive_message(a));
    }
    TarEntry t;
    t.path = utf8_or_raw(archive_entry_pathname_utf8(e), archive_entry_pathname(e));
    if (t.path.empty())
      return fail(Errc::kInvalid, "reading tar entry #" + std::to_string(entries.size() + 1) + ": no path");
    t.mode = static_cast<unsigned>(archive_entry_perm(e)) & 07777;
    t.mtime = archive_entry_mtime(e);
    t.uid = static_cast<unsigned>(archive_entry_uid(e));
    t.gid = static_cast<unsigned>(archive_entry_gid(e));
    if (archive_entry_sparse_count(e) > 0)
      return fail(Errc::kInvalid, "reading tar entry " + quoted(t.path) + ": sparse files are not supported");

    const char* hard = archive_entry_hardlink(e);
    mode_t type = archive_entry_filetype(e);
    if (hard || type == AE_IFREG) {
      t.type = EntryType::kFile;
      size_t declared = archive_entry_size_is_set(e)
                            ? static_cast<size_t>(std::max<la_int64_t>(archive_entry_size(e), 0))
                            : 0;
      auto content = read_content(a, t.path, std::min(declared, bytes.size()));
      if (!content) return content.fail();
      t.content = std::move(*content);
      if (hard && t.content.empty()) {
        // A hard link carries no data of its own: copy the earlier file it names.
        std::string target = utf8_or_raw(archive_entry_hardlink_utf8(e), hard);
        auto it = std::find_if(entries.rbegin(), entries.rend(), [&](const TarEntry& x) {
          return x.type == EntryType::kFile && x.path == target;
        });
        if (it == entries.rend())
          return fail(Errc::kInvalid, "reading tar entry " + quoted(t.path) + ": hard link to unknown file " +
                                          quoted(target));
        t.content = it->content;
      }
    } else if (type == AE_IFDIR) {
      t.type = EntryType::kDirectory;
    } else if (type == AE_IFLNK) {
      t.type = EntryType::kSymlink;
      t.link_target = utf8_or_raw(archive_entry_symlink_utf8(e), archive_entry_symlink(e));
    } else {
      return fail(Errc::kInvalid, "reading tar entry " + quoted(t.path) + ": unsupported " + type_name(type));
    }
    entries.push_back(std::move(t));
  }
  return entries;
}

Result<std::string> read_single_file(std::string_view bytes) {
  auto entries = read_tar(bytes);
  if (!entries) return entries.fail();
  TarEntry* found = nullptr;
  for (TarEntry& e : *entries) {
    if (e.type != EntryType::kFile) continue;
    if (found)
      return fail(Errc::kInvalid, "tar archive holds more than one file (" + quoted(found->path) + ", " +
                                      quoted(e.path) + ")");
    found = &e;
  }
  if (!found) return fail(Errc::kInvalid, "tar archive holds no regular file");
  return std::move(found->content);
}

namespace {

// TarBudget's count over one archive: every entry, and the declared sizes of regular files.
class BudgetCount {
 public:
  explicit BudgetCount(const TarBudget& b) : b_(b) {}
  Status add(const std::string& path, bool data_file, std::uint64_t size) {
    if (b_.entries > 0 && ++entries_ > b_.entries)
      return fail(Errc::kExceeded, b_.what + " holds more than " + std::to_string(b_.entries) + " entries (at " +
                                       quoted(path) + "), past what a copy takes");
    if (!data_file || b_.file_bytes == 0) return {};
    bytes_ += size;
    if (bytes_ > b_.file_bytes)
      return fail(Errc::kExceeded, b_.what + "'s files declare more than " + std::to_string(b_.file_bytes >> 20) +
                                       " MiB in all (at " + quoted(path) +
                                       "; sparse files count their whole length), past its disk limit");
    return {};
  }

 private:
  const TarBudget& b_;
  std::size_t entries_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace

Status read_tar_stream(const TarSource& source, const std::function<TarKeep(const TarHeader&)>& want,
                       const std::function<Status(const TarHeader&, std::string data)>& got, const TarBudget& budget) {
  SourceReader r{source};
  auto opened = open_source(r);
  if (!opened) return opened.fail();
  archive* a = opened->get();
  std::vector<char> buf(kStreamChunk);
  std::string last;
  BudgetCount spent(budget);
  for (;;) {
    archive_entry* e = nullptr;
    int rc = archive_read_next_header(a, &e);
    if (rc == ARCHIVE_EOF) return {};
    if (rc < ARCHIVE_WARN) return fail(read_error(r, a, header_context(last)));
    mode_t type = archive_entry_filetype(e);
    bool hard = archive_entry_hardlink(e) != nullptr;
    if (!hard && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) continue;  // devices, fifos
    TarHeader h = header_of(e);
    if (h.path.empty()) return fail(Errc::kInvalid, "the tar entry after " + quoted(last) + " has no path");
    last = h.path;
    if (auto st = spent.add(h.path, !hard && type == AE_IFREG, h.size); !st) return st;
    TarKeep k = want(h);
    if (k.stop) return {};
    if (h.type != EntryType::kFile || k.bytes == 0 || h.size == 0) {
      if (h.type == EntryType::kFile && k.bytes > 0)
        if (auto st = got(h, {}); !st) return st;
      continue;  // the next header skips the data
    }
    const std::size_t keep = static_cast<std::size_t>(std::min<std::uint64_t>(k.bytes, h.size));
    std::string data;
    data.reserve(keep);
    while (data.size() < keep) {
      la_ssize_t n = archive_read_data(a, buf.data(), std::min(buf.size(), keep - data.size()));
      if (n < 0) return fail(read_error(r, a, "reading tar entry " + quoted(h.path)));
      if (n == 0) break;
      data.append(buf.data(), static_cast<std::size_t>(n));
    }
    if (auto st = got(h, std::move(data)); !st) return st;
  }
}

namespace {

// Every entry of `in` onto `out`: owned by `owner` when given (names, xattrs, ACLs, flags and
// sparse maps dropped, setuid/setgid cleared), as they are otherwise; devices left out; files
// counted against `spent` when given.
Status copy_entries(archive* in, const SourceReader& r, archive* out, const std::function<Error(const std::string&)>& write_error,
                    const std::optional<TarOwner>& owner, BudgetCount* spent) {
  std::vector<char> buf(kStreamChunk);
  std::string last;
  for (;;) {
    archive_entry* e = nullptr;
    int rc = archive_read_next_header(in, &e);
    if (rc == ARCHIVE_EOF) return {};
    if (rc < ARCHIVE_WARN) return fail(read_error(r, in, header_context(last)));
    std::string path = utf8_or_raw(archive_entry_pathname_utf8(e), archive_entry_pathname(e));
    if (auto st = check_path(path); !st) return st;
    last = path;
    mode_t type = archive_entry_filetype(e);
    const bool hard = archive_entry_hardlink(e) != nullptr;
    if (!hard && (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFSOCK)) continue;
    if (spent)
      if (auto st = spent->add(path, !hard && type == AE_IFREG,
                               static_cast<std::uint64_t>(std::max<la_int64_t>(0, archive_entry_size(e))));
          !st)
        return st;
    if (owner) {  // the copy belongs to `owner` whatever the source said, and grants nothing beyond it
      archive_entry_set_uid(e, owner->uid);
      archive_entry_set_gid(e, owner->gid);
      archive_entry_set_uname(e, nullptr);
      archive_entry_set_gname(e, nullptr);
      archive_entry_set_perm(e, archive_entry_perm(e) & 01777);
      archive_entry_xattr_clear(e);
      archive_entry_acl_clear(e);
      archive_entry_set_fflags(e, 0, 0);
      archive_entry_sparse_clear(e);
    }
    if (hard) archive_entry_set_size(e, 0);
    if (archive_write_header(out, e) < ARCHIVE_WARN) return fail(write_error("writing tar entry " + quoted(path)));
    if (!hard && type == AE_IFREG) {
      for (;;) {
        la_ssize_t n = archive_read_data(in, buf.data(), buf.size());
        if (n < 0) return fail(read_error(r, in, "reading tar entry " + quoted(path)));
        if (n == 0) break;
        for (la_ssize_t done = 0; done < n;) {
          la_ssize_t m = archive_write_data(out, buf.data() + done, static_cast<size_t>(n - done));
          if (m <= 0) return fail(write_error("writing tar entry " + quoted(path)));
          done += m;
        }
      }
    }
    if (archive_write_finish_entry(out) < ARCHIVE_WARN) return fail(write_error("writing tar entry " + quoted(path)));
  }
}

}  // namespace

Status rewrite_tar_stream(const TarSource& source, const TarSink& sink, TarOwner owner, const TarBudget& budget,
                          std::string_view tail) {
  SourceReader r{source};
  auto opened = open_source(r);
  if (!opened) return opened.fail();

  SinkWriter w{sink};
  std::unique_ptr<archive, WriteFree> holder(archive_write_new());
  archive* out = holder.get();
  if (!out) return fail(Errc::kIo, "creating tar writer: out of memory");
  auto write_error = [&](const std::string& what) {
    return w.error ? *w.error : make_error(Errc::kIo, what + ": " + archive_message(out));
  };
  if (archive_write_set_format_pax_restricted(out) != ARCHIVE_OK ||
      archive_write_set_bytes_per_block(out, 0) != ARCHIVE_OK ||
      archive_write_open2(out, &w, nullptr, SinkWriter::write, nullptr, nullptr) != ARCHIVE_OK)
    return fail(write_error("creating tar writer"));

  BudgetCount spent(budget);
  if (auto st = copy_entries(opened->get(), r, out, write_error, owner, &spent); !st) return st;
  if (!tail.empty()) {
    std::size_t at = 0;
    SourceReader tr{[&](std::span<char> buf) -> Result<std::size_t> {
      std::size_t n = std::min(buf.size(), tail.size() - at);
      std::copy_n(tail.data() + at, n, buf.data());
      at += n;
      return n;
    }};
    auto t = open_source(tr);
    if (!t) return t.fail();
    if (auto st = copy_entries(t->get(), tr, out, write_error, std::nullopt, nullptr); !st) return st;
  }
  if (archive_write_close(out) != ARCHIVE_OK) return fail(write_error("closing tar archive"));
  return {};
}

Result<std::string> concat_tars(const std::vector<std::string>& tars) {
  TarWriter out;
  for (const auto& tar : tars) {
    auto entries = read_tar(tar);
    if (!entries) return entries.fail();
    for (const auto& e : *entries)
      if (auto st = out.add_entry(e); !st) return st.fail();
  }
  return out.finish();
}

}  // namespace forge::engine
