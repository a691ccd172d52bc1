#include "threads.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "checked_io.h"
#include "content.h"

namespace ckpt_writer {
namespace {

void one_thread(const std::string& dir, int i) {
  const std::string bin = join(dir, "thr_" + std::to_string(i) + ".bin");
  auto data = make_bytes(seed_for(100 + i, 1), 256 * 1024);
  int fd = xopen(bin, O_WRONLY | O_CREAT | O_TRUNC);
  // Interleave sequential writes with pwrites behind them, in small pieces, so the threads'
  // calls overlap in time.
  for (size_t off = 0; off < data.size(); off += 8192) {
    xwrite_all(fd, data.data() + off, 4096, bin);
    ::lseek(fd, 4096, SEEK_CUR);
    if (off >= 16384)
      xpwrite_all(fd, data.data() + off - 16384 + 4096, 4096,
                  static_cast<off_t>(off - 16384 + 4096), bin);
  }
  xpwrite_all(fd, data.data() + data.size() - 12288, 4096, static_cast<off_t>(data.size() - 12288),
              bin);
  xpwrite_all(fd, data.data() + data.size() - 4096, 4096, static_cast<off_t>(data.size() - 4096),
              bin);
  xclose(fd, bin);

  const std::string dat = join(dir, "thr_" + std::to_string(i) + ".dat");
  FILE* f = std::fopen(dat.c_str(), "w");
  if (!f) die("fopen", dat);
  auto field = make_field(seed_for(100 + i, 2), 20000);
  for (size_t k = 0; k < field.size(); k += 1000)
    if (std::fwrite(field.data() + k, sizeof(double), 1000, f) != 1000) die("fwrite", dat);
  if (std::fclose(f) != 0) die("fclose", dat);
}

}  // namespace

void write_threaded(const std::string& dir, int threads) {
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(one_thread, dir, i);
  for (auto& t : pool) t.join();
}

}  // namespace ckpt_writer
