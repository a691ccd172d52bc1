// Which ckptfwd this is: the version of the CMake project (CMakeLists.txt, project(VERSION)),
// as `ckptfwd --version` and `ckptfwd-forwarder --version` print it and the forwarder's log
// and stats records carry it, so a record or a log line says which build wrote it.
#pragma once

namespace ckptfwd {

// "MAJOR.MINOR.PATCH".
const char* release_version();

}  // namespace ckptfwd
