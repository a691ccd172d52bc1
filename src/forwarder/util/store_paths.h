// Where things go on the store and in the session dir.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"

namespace ckptfwd::fwd {

// Config.store, else <D>/.ckptfwd where D is the longest literal directory of the capture
// globs (Config::capture_dirs) that holds path: CKPTFWD_CAPTURE=/ck/step_*/r*.bin puts
// every step's files into /ck/.ckptfwd, one store however many directories a run makes.
// A path no glob directory holds, and a directory that already has a .ckptfwd of the
// former default (<dirname(path)>/.ckptfwd, from an earlier run), use <dirname(path)>.
std::string store_for(const Config& cfg, const std::string& path);
// The stores known before any file is named: Config.store, else <D>/.ckptfwd for each
// capture directory D (stores of the former default beside deeper directories are not).
std::vector<std::string> known_stores(const Config& cfg);
std::string dirname_of(const std::string& path);
std::string basename_of(const std::string& path);
// "c-<node>-<unix ns>-<seq>.ckc" (unique per forwarder; node keeps nodes apart).
std::string new_container_name(const std::string& node);
// v<vid>.data / v<vid>.meta inside the session dir.
std::string staged_data_path(const std::string& session_dir, uint64_t vid);
std::string staged_meta_path(const std::string& session_dir, uint64_t vid);
// r<hash>.data: a read view of (store, container, file index).
std::string read_view_path(const std::string& session_dir, const std::string& store,
                           const std::string& container, uint32_t index);

}  // namespace ckptfwd::fwd
