// OpenFOAM field files written with `writeFormat binary` (volScalarField, volVectorField,
// surfaceScalarField, ... of every time directory, processor*/ of a decomposed case): the
// binary lists inside the ASCII dictionary, without the OpenFOAM library.
//
//   FoamFile { version 2.0; format binary; class volVectorField;
//              arch "LSB;label=32;scalar=64"; object U; }
//   dimensions [0 1 -1 0 0 0 0];
//   internalField nonuniform List<vector> 900
//   (<900 * 3 float64, raw>)
//   ;
//   boundaryField { movingWall { type fixedValue; value nonuniform List<vector> 30(<...>); } ... }
//
// The ASCII parts are read as tokens (words, strings, comments, braces, semicolons) to
// know the dictionary path of each list; a list `nonuniform List<T> N (` is followed by
// exactly N elements of T as raw bytes and `)`. T: scalar (F64 or F32 per the arch's
// scalar=), vector (3), sphericalTensor (1), symmTensor (6), tensor (9), label (I32 or I64
// per label=). Byte order from the arch's LSB/MSB (LSB when absent).
//
// Variables (source "openfoam"): one per list, named "<object>/<dictionary path>/<keyword>",
// e.g. "U/internalField", "U/boundaryField/movingWall/value": the same name in every rank's
// processor file, so a field merges across ranks; shape [N] or [N][components]. A file
// whose class is one list (labelList, scalarField, vectorField: the mesh's points, owner,
// neighbour, a decomposed case's addressing; faceCompactList: two label lists) holds it at
// the top, `N (...)`: variable "<object>" ("faces/offsets" and "faces/labels"). The ASCII
// text, the counts and the parentheses are residual. A binary file without lists (a
// uniform field) gets a map without variables. A file whose header says `format ascii`,
// or that is not a FoamFile, is not one of these; a binary list that runs past the end of
// the file or is not closed by `)` makes the whole file unmapped (stored agnostic, which
// is always correct).
#pragma once
#include <cstdint>
#include <string>

#include "store/container/variable_map.h"

namespace ckptfwd::schema {

// True when the first 4 KiB hold a FoamFile header saying `format binary`.
bool is_openfoam_binary(const uint8_t* data, uint64_t size);

// The binary lists of data[0, size) into out. Hostile bytes: never reads outside
// [0, size), work linear in size; false with *why and out untouched on anything malformed.
// A returned map has passed check_variable_map.
bool infer_openfoam_field(const uint8_t* data, uint64_t size, VariableMap& out, std::string* why);

}  // namespace ckptfwd::schema
