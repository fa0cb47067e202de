//===- TuneBundles.cpp - dmrt-tune: the candidate bundles and their runs --===//
#include "tuning-db/tools/TuneBundles.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace dmc::tuningdb {

std::string folderOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string selfFolder(const char *argv0) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return folderOf(n > 0 ? std::string(buf, size_t(n)) : std::string(argv0));
}

bool isFile(const std::string &p) { return access(p.c_str(), X_OK) == 0; }

bool isPathBundle(const std::string &name) {
  for (const char *path : {"unfused.dmlib", "apart.dmlib", "bgrad.dmlib", "nobgrad.dmlib",
                           "noaddend.dmlib", "inplace.dmlib", "drawn.dmlib"})
    if (name == path)
      return true;
  return false;
}

std::vector<std::string> bundlesOf(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 6 && n.compare(n.size() - 6, 6, ".dmlib") == 0)
        names.push_back(n);
    }
    closedir(d);
  }
  auto rank = [](const std::string &n) {
    if (n == "default.dmlib")
      return std::make_pair(-3L, n);
    if (n == "unfused.dmlib")
      return std::make_pair(-2L, n);
    if (isPathBundle(n)) // by name
      return std::make_pair(-1L, n);
    if (n[0] == 'c' && std::isdigit(static_cast<unsigned char>(n[1])))
      return std::make_pair(std::strtol(n.c_str() + 1, nullptr, 10), n);
    return std::make_pair(1L << 40, n);
  };
  std::sort(names.begin(), names.end(),
            [&](const std::string &a, const std::string &b) { return rank(a) < rank(b); });
  return names;
}

bool readTuneSteps(const std::string &path, std::string &kernels, std::string &contractions,
                   std::string &error) {
  FILE *f = std::fopen(path.c_str(), "r");
  if (!f)
    return false;
  char buf[4096];
  bool gotK = false, gotC = false;
  while (std::fgets(buf, sizeof buf, f)) {
    std::string line = buf;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
      line.pop_back();
    size_t sp = line.find(' ');
    std::string key = line.substr(0, sp), value = sp == std::string::npos ? "" : line.substr(sp + 1);
    bool ok = !value.empty() && value.find_first_not_of("0123456789,-") == std::string::npos;
    if (key == "kernels" && ok && !gotK) {
      kernels = value == "-" ? "" : value;
      gotK = true;
    } else if (key == "contractions" && ok && !gotC) {
      contractions = value == "-" ? "" : value;
      gotC = true;
    } else {
      error = path + ": expected \"kernels LIST\" and \"contractions LIST\" (ids separated by "
              "commas, or -), got \"" + line + "\"";
      break;
    }
  }
  std::fclose(f);
  if (error.empty() && (!gotK || !gotC))
    error = path + ": needs a \"kernels\" and a \"contractions\" line";
  return error.empty();
}

int runChild(const std::vector<std::string> &args, const std::string &log) {
  std::vector<char *> argv;
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
      _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

namespace {

/// "kernel causal_mask_softmax_dropout(bhjk->...)" -> "causal_mask_softmax_dropout".
std::string opName(const Record &r) {
  std::string s = r.signature.substr(0, r.signature.find('('));
  size_t space = s.find(' ');
  return space == std::string::npos ? s : s.substr(space + 1);
}

} // namespace

std::string BestSoFar::update(const std::vector<Record> &records, const std::string &bundle) {
  std::string faster;
  for (const Record &r : records) {
    if (r.rejected)
      continue;
    auto [it, added] = best_.try_emplace(problemKey(r), r.medianUs);
    if (added || r.medianUs >= it->second)
      continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.1f -> %.1f us", it->second, r.medianUs);
    faster += (faster.empty() ? "" : ", ") + opName(r) + buf;
    it->second = r.medianUs;
  }
  return faster.empty() ? "" : "faster: " + faster + " (" + bundle + ")";
}

bool parseDevices(const std::string &list, std::vector<int> &devices, std::string &error) {
  devices.clear();
  std::set<int> seen;
  size_t at = 0;
  while (at <= list.size()) {
    size_t comma = list.find(',', at);
    std::string item = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char *end = nullptr;
    long d = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end || d < 0 || d > 1023 || !std::isdigit((unsigned char)item[0])) {
      error = "--devices needs device ordinals separated by commas (\"0,1\"), got \"" + list +
              "\"";
      return false;
    }
    if (!seen.insert(int(d)).second) {
      error = "--devices names device " + item + " twice in \"" + list + "\"";
      return false;
    }
    devices.push_back(int(d));
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  return true;
}

} // namespace dmc::tuningdb
