// LAMMPS binary restart files (`write_restart`, `restart N file`): the per-atom data,
// without the LAMMPS library. The header, the type arrays and the force-field sections
// before it are written by each style's own code without lengths, so they are not parsed:
// the per-atom data is found from the end of the file, which every restart file of
// format revision 3 has (LAMMPS 2019 on), as LAMMPS lays it out:
//
//   ... header sections (single file, or the ".base" file of a multi-file restart) ...
//   [i32 flag][i32 n][n float64]        one "per-processor" block per MPI rank in the file
//   ... (a single file holds every rank's block; a multi-file restart's "file.N" holds
//        its ranks' blocks after an [i32 flag][i32 count] pair)
//   "LammpS RestartT\0"                 16 bytes closing every restart file
//
// A block is a run of atom records, each starting with its own length in values (a
// float64 holding an integer) followed by the atom's values: x y z, then integers (id,
// type, group mask, image flags) stored as the bits of float64 slots, velocities and the
// atom style's other fields (charge, bond lists...). The blocks are the earliest run of
// [flag][n][values] with one flag value that ends exactly at the closing string, every
// block a whole number of records of valid lengths.
//
// Variables (source "lammps"): when every record of the file has the same length L (atom
// styles without per-atom lists: atomic, charge, sphere...), "lammps/atoms" F64LE of shape
// [atoms][L], one extent per block, so the codec chains see records of L fields (kColumns
// stores them field by field). Otherwise, "lammps/atoms" F64LE [values], one extent per
// block. Flags, counts, headers and the closing string are residual. A file that opens
// with the string too, has no blocks and whose sections end with the flag -1 right before
// the closing string (the ".base" header file of a multi-file restart) gets a map without
// variables: stored as bytes, and no failure to report. Native (little-endian) files
// only; anything else (big-endian, the MPI-IO layout, a truncated or hostile file)
// gets no map and is stored agnostic, which is always correct.
#pragma once
#include <cstdint>
#include <string>

#include "store/container/variable_map.h"

namespace ckptfwd::schema {

// True when data ends with LAMMPS's closing string "LammpS RestartT\0".
bool is_lammps_restart(const uint8_t* data, uint64_t size);

// The per-atom variables of data[0, size) into out (source "lammps"). Hostile bytes: never
// reads outside [0, size), bounded work (a budget of steps proportional to size); false with
// *why and out untouched when no run of blocks fits (except in a header file, above). A
// returned map has passed check_variable_map.
bool infer_lammps_restart(const uint8_t* data, uint64_t size, VariableMap& out, std::string* why);

}  // namespace ckptfwd::schema
