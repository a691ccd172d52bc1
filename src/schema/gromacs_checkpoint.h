// GROMACS checkpoint files (`gmx mdrun`: md.cpt, md_prev.cpt and the md_stepN.cpt it writes
// first and renames): the per-atom state vectors, without GROMACS. A checkpoint is XDR
// (big-endian, in 4-byte units), as GROMACS 2018 and later write it (file version 17 on):
//
//   i32 magic 171817
//   6 strings [u32 length <= 1024][bytes, padded to 4]: version, build time, build user,
//     build host, program, generation time
//   i32 file version, i32 double precision, string host
//   i32 atoms, T-coupling groups, Nose-Hoover chain length, barostat chains, lambda states,
//     integrator, simulation part; i64 step; f64 time; i32 PP ranks, DD cells x y z, PME ranks
//   i32 state flags (bit 7: positions x, bit 8: velocities v, bit 10: CG search direction)
//   more i32 flags and counts, as many as the file version has (8 in version 22, 2022)
//   one entry per state flag set, in bit order: [i32 n][i32 type][n values of the type]
//     (type 0: int, 1: float, 2: double; x, v and CGp hold 3 x atoms reals)
//   kinetic energy and energy history entries, the output files' checksums, magic 171819
//
// The state entries start where the flags after the state flags end. Rather than a table
// of which version has which flags (each GROMACS release may add one), the start is the
// first of 0..16 i32 after the state flags from which every flagged entry is well formed
// and x, v and CGp (when flagged) hold 3 x atoms reals: one place fits in a real file.
//
// Variables (source "gromacs"): "gromacs/x", "gromacs/v", "gromacs/CGp" of F32BE (F64BE
// for a double precision build) and shape [atoms][3], one extent each. The rest is
// residual: it is small (box, thermostat state, energy sums) or text. A file that ends
// inside an entry after a whole per-atom vector (the version an fsync seals: gmx mdrun
// calls fsync before it writes its last buffer) maps the vectors before the cut. Anything
// else that does not fit (older versions, a file cut sooner, a hostile file) gets no map
// and is stored agnostic, which is always correct.
#pragma once
#include <cstdint>
#include <string>

#include "store/container/variable_map.h"

namespace ckptfwd::schema {

// True when data opens with the checkpoint magic (171817, XDR).
bool is_gromacs_checkpoint(const uint8_t* data, uint64_t size);

// The per-atom variables of data[0, size) into out (source "gromacs"). Hostile bytes: never
// reads outside [0, size), constant work; false with *why and out untouched when the header
// or the state entries do not parse. A returned map has passed check_variable_map.
bool infer_gromacs_checkpoint(const uint8_t* data, uint64_t size, VariableMap& out,
                              std::string* why);

}  // namespace ckptfwd::schema
