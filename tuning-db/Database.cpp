//===- Database.cpp - Locked appends, atomic rewrites, tolerant reads -----===//
#include "tuning-db/Database.h"

#include "tuning-db/Codec.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dmc::tuningdb {
namespace {

std::string sysError(const std::string &path, const char *what) {
  return path + ": cannot " + what + ": " + std::strerror(errno);
}

/// Closes the descriptor (and so releases its flock) on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      close(fd);
  }
};

/// Opens PATH and takes flock(`op`); reopens while a rewrite replaced the file
/// between our open and our lock. `missing` reports ENOENT without O_CREAT.
bool openLocked(const std::string &path, int flags, int op, Fd &f, bool &missing,
                std::string &error) {
  missing = false;
  for (;;) {
    f.fd = open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (f.fd < 0) {
      missing = errno == ENOENT && !(flags & O_CREAT);
      return missing || (error = sysError(path, "open"), false);
    }
    int rc;
    while ((rc = flock(f.fd, op)) < 0 && errno == EINTR) {
    }
    if (rc < 0)
      return error = sysError(path, "lock"), false;
    struct stat held, named;
    if (fstat(f.fd, &held) < 0)
      return error = sysError(path, "stat"), false;
    if (stat(path.c_str(), &named) == 0 && named.st_ino == held.st_ino &&
        named.st_dev == held.st_dev)
      return true;
    close(f.fd);
    f.fd = -1;
  }
}

bool readFrom(int fd, off_t offset, size_t n, std::string &out, const std::string &path,
              std::string &error) {
  out.resize(n);
  size_t done = 0;
  while (done < n) {
    ssize_t got = pread(fd, &out[done], n - done, offset + (off_t)done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return error = sysError(path, "read"), false;
    done += (size_t)got;
  }
  return true;
}

bool readAll(int fd, std::string &out, const std::string &path, std::string &error) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return error = sysError(path, "stat"), false;
  return readFrom(fd, 0, (size_t)st.st_size, out, path, error);
}

bool writeAll(int fd, const std::string &data, const std::string &path, std::string &error) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return error = sysError(path, "write"), false;
    done += (size_t)n;
  }
  return true;
}

/// Under the exclusive lock: a file not ending in a newline ends in a line
/// from a writer that died mid-write (removed) or one without its newline.
bool repairTail(int fd, const std::string &path, std::string &error,
                std::vector<std::string> &warnings) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return error = sysError(path, "stat"), false;
  std::string last;
  if (st.st_size == 0)
    return true;
  if (!readFrom(fd, st.st_size - 1, 1, last, path, error))
    return false;
  if (last == "\n")
    return true;
  off_t start = st.st_size; // the tail's first byte
  std::string chunk;
  while (start > 0) {
    size_t n = (size_t)std::min<off_t>(start, 65536);
    if (!readFrom(fd, start - (off_t)n, n, chunk, path, error))
      return false;
    size_t nl = chunk.rfind('\n');
    if (nl != std::string::npos) {
      start = start - (off_t)n + (off_t)nl + 1;
      break;
    }
    start -= (off_t)n;
  }
  std::string tail, why;
  Record parsed;
  if (!readFrom(fd, start, (size_t)(st.st_size - start), tail, path, error))
    return false;
  if (decodeLine(tail, path, parsed, why))
    return writeAll(fd, "\n", path, error);
  if (ftruncate(fd, start) < 0)
    return error = sysError(path, "truncate"), false;
  warnings.push_back(path + ": removed a torn last line (" + std::to_string(tail.size()) +
                     " bytes at offset " + std::to_string((long long)start) +
                     ", no newline) left by an interrupted writer");
  return true;
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

} // namespace

bool parseDatabase(const std::string &text, const std::string &path, std::vector<Record> &out,
                   std::string &error, std::vector<std::string> &warnings) {
  size_t begin = 0;
  for (size_t line = 1; begin < text.size(); ++line) {
    size_t end = text.find('\n', begin);
    bool torn = end == std::string::npos;
    std::string s = text.substr(begin, torn ? std::string::npos : end - begin);
    begin = torn ? text.size() : end + 1;
    if (s.empty())
      continue;
    Record r;
    std::string why;
    if (decodeLine(s, path + ":" + std::to_string(line), r, why)) {
      out.push_back(std::move(r));
    } else if (torn) {
      warnings.push_back(why + "; ignored: a torn last line (no newline at the end) left by "
                               "an interrupted writer");
    } else {
      error = why;
      return false;
    }
  }
  return true;
}

bool Database::load(const std::string &path, bool missingIsEmpty, std::string &error,
                    std::vector<std::string> &warnings) {
  Fd f;
  bool missing;
  if (!openLocked(path, O_RDONLY, LOCK_SH, f, missing, error))
    return false;
  if (missing) {
    if (!missingIsEmpty)
      error = path + ": no such file";
    return missingIsEmpty;
  }
  std::string text;
  std::vector<Record> records;
  if (!readAll(f.fd, text, path, error) ||
      !parseDatabase(text, path, records, error, warnings))
    return false;
  for (const Record &r : records)
    add(r);
  return true;
}

void Database::add(const Record &r) {
  records_.push_back(r);
  auto [it, inserted] = best_.emplace(key(r), records_.size() - 1);
  if (!inserted && better(r, records_[it->second]))
    it->second = records_.size() - 1;
}

const Record *Database::find(const std::string &k) const {
  auto it = best_.find(k);
  return it == best_.end() ? nullptr : &records_[it->second];
}

bool append(const std::string &path, const Record &r, bool sync, std::string &error,
            std::vector<std::string> &warnings) {
  Fd f;
  bool missing;
  if (!openLocked(path, O_RDWR | O_APPEND | O_CREAT, LOCK_EX, f, missing, error) ||
      !repairTail(f.fd, path, error, warnings))
    return false;
  struct stat st;
  if (fstat(f.fd, &st) < 0)
    return error = sysError(path, "stat"), false;
  std::string line = encodeLine(r) + "\n";
  ssize_t n;
  while ((n = write(f.fd, line.data(), line.size())) < 0 && errno == EINTR) {
  }
  if (n != (ssize_t)line.size()) {
    // A short write (disk full): take it back rather than leave a torn line.
    error = n < 0 ? sysError(path, "write")
                  : path + ": short write (" + std::to_string(n) + " of " +
                        std::to_string(line.size()) + " bytes), taken back";
    (void)!ftruncate(f.fd, st.st_size);
    return false;
  }
  return !sync || fsync(f.fd) == 0 || (error = sysError(path, "fsync"), false);
}

bool rewrite(const std::string &path, bool create, const Edit &edit, std::string &error,
             std::vector<std::string> &warnings) {
  Fd f;
  bool missing;
  if (!openLocked(path, O_RDWR | (create ? O_CREAT : 0), LOCK_EX, f, missing, error))
    return false;
  if (missing)
    return error = path + ": no such file", false;
  std::string text, out;
  std::vector<Record> records;
  if (!readAll(f.fd, text, path, error) ||
      !parseDatabase(text, path, records, error, warnings) || !edit(records, error))
    return false;
  for (const Record &r : records)
    out += encodeLine(r) + "\n";
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  Fd t;
  t.fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (t.fd < 0)
    return error = sysError(tmp, "create"), false;
  if (!writeAll(t.fd, out, tmp, error) || fsync(t.fd) < 0 ||
      rename(tmp.c_str(), path.c_str()) < 0) {
    if (error.empty())
      error = sysError(tmp, "write and rename");
    unlink(tmp.c_str());
    return false;
  }
  Fd dir; // make the rename itself durable
  dir.fd = open(directoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir.fd >= 0)
    fsync(dir.fd);
  return true;
}

} // namespace dmc::tuningdb
