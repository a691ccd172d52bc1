// Shared fixture for forwarder unit tests: a forwarder on a private session dir, served
// from a thread, and a tiny protocol client.
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "forwarder/daemon/forwarder.h"
#include "forwarder/daemon/listener.h"
#include "forwarder/util/test_hooks.h"
#include "wire/protocol.h"
#include "wire/session.h"

namespace ckptfwd::fwd::test {

namespace fs = std::filesystem;

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Appends the bytes of v (host order): raw binary checkpoints as a C writer makes them.
template <class T>
void put(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// A pseudo-random but compressible payload.
inline std::string payload(size_t n, unsigned seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>((i % 64 < 32) ? 'a' + (x >> 16) % 4 : (x >> 24));
  }
  return s;
}

class Client {
 public:
  explicit Client(const std::string& sock) : fd_(connect_control_socket(sock)) {}
  ~Client() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  std::vector<std::string> call(std::vector<std::string> fields) {
    if (!send(std::move(fields))) return {"<send failed>"};
    return receive();
  }
  // The two halves of call(), for a request whose reply is read later (a leased OPEN).
  bool send(std::vector<std::string> fields) {
    std::vector<const char*> p;
    for (auto& f : fields) p.push_back(f.c_str());
    std::vector<char> buf(wire::kMaxFrame + 1);
    size_t len = wire::encode(buf.data(), buf.size(), p.data(), p.size());
    return wire::send_frame(fd_, buf.data(), len, wr);
  }
  // Requests sent in one write, as a client that does not wait for replies may queue them.
  bool send_together(const std::vector<std::vector<std::string>>& requests) {
    std::string all;
    for (const auto& fields : requests) {
      std::vector<const char*> p;
      for (auto& f : fields) p.push_back(f.c_str());
      std::vector<char> buf(wire::kMaxFrame + 1);
      size_t len = wire::encode(buf.data(), buf.size(), p.data(), p.size());
      for (int i = 0; i < 4; ++i) all += static_cast<char>((len >> (8 * i)) & 0xff);
      all.append(buf.data(), len);
    }
    return ::write(fd_, all.data(), all.size()) == static_cast<ssize_t>(all.size());
  }
  std::vector<std::string> receive() {
    // One frame exactly (a reply may be followed by another): the header, then its bytes.
    char hdr[4];
    if (!read_exactly(hdr, 4)) return {"<recv failed>"};
    size_t n = wire::frame_length(hdr);
    std::vector<char> body(n + 1);
    if (!read_exactly(body.data(), n)) return {"<recv failed>"};
    body[n] = '\0';
    char* reply = body.data();
    std::vector<std::string> out;
    for (size_t start = 0, i = 0; i <= n; ++i)
      if (reply[i] == '\0') {
        out.emplace_back(reply + start, i - start);
        start = i + 1;
      }
    return out;
  }

 private:
  bool read_exactly(char* p, size_t n) {
    for (size_t got = 0; got < n;) {
      ssize_t r = ::read(fd_, p + got, n - got);
      if (r <= 0) return false;
      got += static_cast<size_t>(r);
    }
    return true;
  }
  static long wr(int fd, const void* p, size_t n) { return ::write(fd, p, n); }
  int fd_;
};

// Each test gets its own stage dir, job id, store and data dir under a temp root.
class ForwarderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "." + info->name();
    for (char& c : name)
      if (!isalnum(static_cast<unsigned char>(c))) c = '_';
    char tmpl[] = "/tmp/ckfwdtest-XXXXXX";
    root_ = mkdtemp(tmpl);
    data_ = root_ + "/data";
    fs::create_directories(data_);
    setenv("CKPTFWD_STAGE_DIR", (root_ + "/stage").c_str(), 1);
    setenv("CKPTFWD_JOB_ID", name.substr(0, 40).c_str(), 1);
    setenv("CKPTFWD_NODE_ID", "testnode", 1);
    ASSERT_TRUE(session_paths(paths_));
    cfg_.batch_window_ms = 50;
    cfg_.wave_window_ms = 50;  // waves (waves.h) wait no longer than a batch window here
    cfg_.idle_exit_s = 0;
    cfg_.writers = 2;
    cfg_.chunk_bytes = 4096;
    cfg_.stats_file = root_ + "/stats.jsonl";  // keeps the test output readable
    timing_.retry_delays = {std::chrono::milliseconds(10), std::chrono::milliseconds(20)};
    timing_.failed_retry = std::chrono::milliseconds(60000);
    timing_.retire_grace = std::chrono::milliseconds(0);  // staged files go at commit
  }

  void TearDown() override {
    stop();
    clear_test_hooks();  // a hook a test set must not run in the next one
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  void start() {
    fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
    std::string err;
    ASSERT_EQ(fwd_->start(&err), Forwarder::Start::kReady) << err;
    thread_ = std::thread([this] { rc_ = fwd_->run(); });
  }

  void stop() {
    if (!fwd_) return;
    fwd_->request_stop();
    if (thread_.joinable()) thread_.join();
    fwd_.reset();
  }

  std::unique_ptr<Client> client() {
    auto c = std::make_unique<Client>(paths_.socket);
    EXPECT_TRUE(c->ok());
    return c;
  }

  std::string store() const { return data_ + "/.ckptfwd"; }

  // OPEN for writing, write bytes into the staged file, CLOSE. Returns the vid.
  std::string write_version(Client& c, const std::string& path, const std::string& bytes,
                            int flags = O_WRONLY | O_CREAT | O_TRUNC) {
    auto r = c.call({"OPEN", path, std::to_string(flags), "644"});
    EXPECT_EQ(r.size(), 5u);  // OK vid staged budget x|-
    if (r.size() != 5 || r[0] != "OK") return "";
    int fd = ::open(r[2].c_str(), O_WRONLY);
    EXPECT_GE(fd, 0);
    if (flags & O_APPEND) lseek(fd, 0, SEEK_END);
    EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    off_t size = lseek(fd, 0, SEEK_END);
    ::close(fd);
    EXPECT_EQ(c.call({"CLOSE", r[1], std::to_string(size)})[0], "OK");
    return r[1];
  }

  // What a reader sees through the forwarder: the bytes of the file OPEN O_RDONLY names.
  std::string read_through(Client& c, const std::string& path) {
    auto r = c.call({"OPEN", path, std::to_string(O_RDONLY), "0"});
    if (r.empty() || r[0] != "OK" || r.size() < 3) return "<" + (r.empty() ? "" : r[0]) + ">";
    return read_file(r[2]);
  }

  std::string root_, data_;
  SessionPaths paths_{};
  Config cfg_;
  BatcherTiming timing_;
  std::unique_ptr<Forwarder> fwd_;
  std::thread thread_;
  int rc_ = -1;
};

}  // namespace ckptfwd::fwd::test
