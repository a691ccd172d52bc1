// What forwarder tests read back to check an outcome: a counter of the forwarder's STATS,
// and what the store itself names for a path (read from its files, not through the
// forwarder).
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "forwarder_test_util.h"
#include "store/manifest/manifest.h"
#include "store/manifest/materialize.h"

namespace ckptfwd::fwd::test {

// The STATS counter key, -1 if the reply has none.
inline long long stat_of(Client& c, const std::string& key) {
  auto js = c.call({"STATS"});
  std::string k = "\"" + key + "\":";
  size_t p = js.size() > 1 ? js[1].find(k) : std::string::npos;
  return p == std::string::npos ? -1 : std::stoll(js[1].substr(p + k.size()));
}

// The bytes a restore of path from store gives back right now (through the file tmp),
// checked against their hashes; a "<...>" text says why there are none.
inline std::string on_store(const std::string& store, const std::string& path,
                            const std::string& tmp) {
  Catalog cat;
  std::string err;
  if (!cat.load(store, &err)) return "<no catalog: " + err + ">";
  const CatalogEntry* e = cat.find(path);
  if (!e) return "<not on the store>";
  int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return "<cannot create " + tmp + ">";
  bool ok = materialize_entry(store, *e, fd, &err);
  ::close(fd);
  return ok ? read_file(tmp) : "<restore failed: " + err + ">";
}

}  // namespace ckptfwd::fwd::test
