// The forwarder's side of the session's notices (wire/notices.h): problems that change what
// the application gets, said once per forwarder on the stderr of every process of the job
// that writes after them. Posted where the problem is found, besides the log line.
//
// Thread-safe. Before attach, or when the notices file cannot be made, post does nothing
// (the log still has the line).
#pragma once
#include <mutex>
#include <set>
#include <string>

namespace ckptfwd::fwd {

class Notices {
 public:
  // Opens (or makes) <session_dir>/notices, 0600, and stores its length in page's word
  // (page: the mapped activity page, yield_gate.h; null: no word, nothing is said). The
  // lines an earlier forwarder of the session wrote there are not posted again.
  void attach(const std::string& session_dir, void* page);
  // Appends text (one line; cut to wire::kMaxNoticeLine) unless a notice of key was posted
  // by this forwarder already. True if appended.
  bool post(const std::string& key, const std::string& text);
  ~Notices();

 private:
  std::mutex mu_;
  int fd_ = -1;
  void* page_ = nullptr;
  std::set<std::string> said_;  // keys posted, and the file's lines
};

// The forwarder's one instance (the pipeline and the batcher post from their threads).
Notices& notices();

}  // namespace ckptfwd::fwd
