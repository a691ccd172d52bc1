#include "store/manifest/store_homes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "store/manifest/manifest_record.h"

namespace ckptfwd::store_homes {

namespace {

bool below(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  if (dir == "/") return path.size() > 1 && path[0] == '/';
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

std::string parent_of(const std::string& p) {
  size_t s = p.rfind('/');
  if (s == std::string::npos) return "";
  return s == 0 ? "/" : p.substr(0, s);
}

std::vector<std::string> components(const std::string& p) {
  std::vector<std::string> out;
  for (size_t b = 0; b < p.size();) {
    size_t e = p.find('/', b);
    if (e == std::string::npos) e = p.size();
    if (e > b) out.push_back(p.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

std::string read_text(const std::string& path, bool* present) {
  std::string text;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (present) *present = fd >= 0;
  if (fd < 0) return text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < (1u << 20);)
    text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (size_t b = 0; b < text.size();) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) break;  // a torn last line is not read
    if (e > b) out.push_back(text.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

}  // namespace

std::string capture_dir(const std::string& store_dir) {
  std::string d = store_dir;
  if (d.empty()) return "";
  if (d[0] != '/') {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return "";
    d = std::string(cwd) + "/" + d;
  }
  // ".." cannot be taken out by text (a symbolic link before it): the directory itself.
  if (d.find("/../") != std::string::npos || d.ends_with("/..")) {
    char real[PATH_MAX];
    if (!realpath(d.c_str(), real)) return "";
    d = real;
  }
  for (size_t at; (at = d.find("/./")) != std::string::npos;) d.erase(at, 2);
  for (size_t at; (at = d.find("//")) != std::string::npos;) d.erase(at, 1);
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  if (d.size() > 2 && d.compare(d.size() - 2, 2, "/.") == 0) d.resize(d.size() - 2);
  size_t slash = d.rfind('/');
  if (slash == std::string::npos || d.substr(slash + 1) != ".ckptfwd") return "";
  return slash == 0 ? "/" : d.substr(0, slash);
}

bool same_store(const std::string& dir, const std::string& store_dir) {
  struct stat a {
  }, b{};
  return ::stat((dir + "/.ckptfwd").c_str(), &a) == 0 && ::stat(store_dir.c_str(), &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::vector<Move> read_moves(const std::string& store_dir, bool* present, bool* placed,
                             std::vector<std::string>* aliases) {
  std::vector<Move> out;
  const std::string cap = capture_dir(store_dir);
  if (placed) *placed = false;
  for (const std::string& line : lines_of(read_text(store_dir + "/" + kName, present))) {
    if (line == "-") {
      if (placed) *placed = true;
      continue;
    }
    size_t tab = line.find('\t');
    Move m;
    if (!manifest_record::pct_decode(line.substr(0, tab), m.from)) continue;
    if (tab != std::string::npos) {
      if (!manifest_record::pct_decode(line.substr(tab + 1), m.to)) continue;
    } else {
      m.to = cap;
    }
    while (m.from.size() > 1 && m.from.back() == '/') m.from.pop_back();
    while (m.to.size() > 1 && m.to.back() == '/') m.to.pop_back();
    if (m.from.empty() || m.from[0] != '/' || m.to.empty() || m.to[0] != '/' || m.from == m.to)
      continue;
    if (tab == std::string::npos && same_store(m.from, store_dir)) {  // not moved: an alias
      if (aliases) aliases->push_back(m.from);
      continue;
    }
    bool seen =
        std::any_of(out.begin(), out.end(), [&](const Move& o) { return o.from == m.from; });
    if (!seen) out.push_back(m);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Move& a, const Move& b) { return a.from.size() > b.from.size(); });
  return out;
}

std::string apply(const std::vector<Move>& moves, const std::string& cap, const std::string& path) {
  if (moves.empty() || path.empty() || path[0] != '/' || below(path, cap)) return path;
  for (const Move& m : moves)
    if (below(path, m.from))
      return (m.to == "/" ? "" : m.to) + path.substr(m.from == "/" ? 0 : m.from.size());
  return path;
}

std::string infer_former(const std::string& cap, const std::vector<std::string>& paths) {
  if (cap.empty() || paths.empty()) return "";
  std::string common;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (below(paths[i], cap) || paths[i].empty() || paths[i][0] != '/') return "";
    std::string dir = parent_of(paths[i]);
    if (i == 0) {
      common = dir;
      continue;
    }
    while (!common.empty() && common != "/" && dir != common && !below(dir, common))
      common = parent_of(common);
  }
  const std::vector<std::string> want = components(cap);
  std::string best;
  size_t best_k = 0;
  for (std::string a = common; !a.empty() && a != "/"; a = parent_of(a)) {
    std::vector<std::string> have = components(a);
    size_t k = 0;
    while (k < have.size() && k < want.size() &&
           have[have.size() - 1 - k] == want[want.size() - 1 - k])
      ++k;
    if (k > best_k) best = a, best_k = k;
  }
  return best == cap ? "" : best;
}

void note_new_store(const std::string& store_dir, bool user_placed) {
  const std::string cap = user_placed ? "-" : capture_dir(store_dir);
  if (cap.empty() || ::access((store_dir + "/" + kName).c_str(), F_OK) == 0 ||
      ::access((store_dir + "/MANIFEST").c_str(), F_OK) == 0 || errno != ENOENT)
    return;
  add_lines(store_dir, {{cap, ""}}, nullptr);
}

bool add_place(const std::string& store_dir, const std::vector<Move>& moves, std::string* err) {
  const std::string cap = capture_dir(store_dir);
  if (cap.empty()) return true;
  std::vector<Move> lines;
  for (const Move& m : moves)
    if (m.to == cap) lines.push_back({m.from, ""});
  lines.push_back({cap, ""});
  return add_lines(store_dir, lines, err);
}

bool add_lines(const std::string& store_dir, const std::vector<Move>& lines, std::string* err) {
  const std::string path = store_dir + "/" + kName;
  std::vector<std::string> have = lines_of(read_text(path, nullptr));
  std::string text;
  for (const Move& l : lines) {
    std::string enc = manifest_record::pct_encode(l.from);
    if (!l.to.empty()) enc += "\t" + manifest_record::pct_encode(l.to);
    if (std::find(have.begin(), have.end(), enc) != have.end()) continue;
    have.push_back(enc);
    text += enc + "\n";
  }
  if (text.empty()) return true;
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!ok && err) *err = path + ": " + strerror(errno);
  if (fd >= 0) ::close(fd);
  return ok;
}

}  // namespace ckptfwd::store_homes
