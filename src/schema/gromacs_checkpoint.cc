#include "schema/gromacs_checkpoint.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace ckptfwd::schema {
namespace {

constexpr uint32_t kMagic = 171817;
constexpr uint32_t kMaxString = 1024;  // GROMACS's CPTSTRLEN
constexpr int32_t kFirstVersion = 17;  // GROMACS 2018: every header field below is there
// More i32 after the state flags than any version has (8 in version 22); the search for
// the state entries tries each count up to it.
constexpr int kMaxFlagsAfter = 16;

constexpr int kBitX = 7, kBitV = 8, kBitCgp = 10;

// Reads XDR units from data[0, size); a read past the end sets failed and returns 0.
class Xdr {
 public:
  Xdr(const uint8_t* d, uint64_t size, uint64_t at = 0) : d_(d), size_(size), at_(at) {}
  uint32_t u32() {
    if (failed_ || size_ - at_ < 4) {
      failed_ = true;
      return 0;
    }
    const uint8_t* p = d_ + at_;
    at_ += 4;
    return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
  }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  void skip(uint64_t n) {
    if (failed_ || size_ - at_ < n) {
      failed_ = true;
      return;
    }
    at_ += n;
  }
  void string() {
    const uint32_t n = u32();
    if (n > kMaxString) failed_ = true;
    skip((uint64_t{n} + 3) / 4 * 4);
  }
  bool failed() const { return failed_; }
  uint64_t at() const { return at_; }

 private:
  const uint8_t* d_;
  uint64_t size_;
  uint64_t at_;
  bool failed_ = false;
};

struct Header {
  int32_t version = 0;
  uint64_t atoms = 0;
  uint32_t state_flags = 0;
  uint64_t flags_end = 0;  // the offset right after the state flags
};

std::optional<Header> read_header(const uint8_t* d, uint64_t size, std::string* why) {
  Xdr x(d, size);
  if (x.u32() != kMagic) {
    *why = "no checkpoint magic 171817";
    return std::nullopt;
  }
  for (int i = 0; i < 6; ++i) x.string();
  Header h;
  h.version = x.i32();
  x.i32();     // double precision
  x.string();  // host
  const int32_t atoms = x.i32();
  x.skip(6 * 4);  // T-coupling groups, NH chains, barostat chains, lambdas, integrator, part
  x.skip(8 + 8);  // step, time
  x.skip(5 * 4);  // PP ranks, DD cells, PME ranks
  h.state_flags = x.u32();
  h.flags_end = x.at();
  if (x.failed()) {
    *why = "the header is cut short or holds a string over 1024 bytes";
    return std::nullopt;
  }
  if (h.version < kFirstVersion) {
    *why = "file version " + std::to_string(h.version) + " (before GROMACS 2018) not parsed";
    return std::nullopt;
  }
  if (atoms <= 0) {
    *why = "no atoms in the header (" + std::to_string(atoms) + ")";
    return std::nullopt;
  }
  h.atoms = static_cast<uint64_t>(atoms);
  return h;
}

struct Entry {
  int bit = 0;
  uint64_t off = 0;  // its first value
  uint64_t n = 0;
  uint32_t elem = 0;  // 4 or 8 bytes
  bool real = false;
};

uint32_t xdr_type_size(int32_t type) {
  switch (type) {
    case 0:  // int
    case 1:  // float
      return 4;
    case 2:  // double
      return 8;
    default:
      return 0;
  }
}

bool per_atom(int bit) { return bit == kBitX || bit == kBitV || bit == kBitCgp; }

struct Entries {
  std::vector<Entry> list;
  bool cut = false;  // the file ends inside an entry: list holds those before it
};

// The state entries from `at`, one per flag bit in bit order; nullopt when one is not well
// formed or a per-atom vector is not 3 x atoms reals. A file that ends inside an entry (a
// checkpoint still being written: gmx mdrun calls fsync before its last buffer is written)
// gives the entries before it, when a per-atom vector is among them.
std::optional<Entries> read_entries(const uint8_t* d, uint64_t size, uint64_t at, const Header& h) {
  Entries out;
  Xdr x(d, size, at);
  for (int bit = 0; bit < 32 && !out.cut; ++bit) {
    if (!(h.state_flags >> bit & 1)) continue;
    const int32_t n = x.i32();
    const int32_t type = x.i32();
    const uint32_t elem = xdr_type_size(type);
    if (x.failed()) {
      out.cut = true;
      break;
    }
    if (n < 0 || elem == 0) return std::nullopt;
    Entry e{bit, x.at(), static_cast<uint64_t>(n), elem, type != 0};
    if (per_atom(bit) && (!e.real || e.n != 3 * h.atoms)) return std::nullopt;
    x.skip(e.n * elem);
    out.cut = x.failed();
    if (!out.cut) out.list.push_back(e);
  }
  if (out.cut && std::none_of(out.list.begin(), out.list.end(),
                              [](const Entry& e) { return per_atom(e.bit); }))
    return std::nullopt;
  return out;
}

const char* entry_name(int bit) {
  switch (bit) {
    case kBitX:
      return "gromacs/x";
    case kBitV:
      return "gromacs/v";
    default:
      return "gromacs/CGp";
  }
}

}  // namespace

bool is_gromacs_checkpoint(const uint8_t* data, uint64_t size) {
  return data && size >= 4 && Xdr(data, size).u32() == kMagic;
}

bool infer_gromacs_checkpoint(const uint8_t* data, uint64_t size, VariableMap& out,
                              std::string* why) {
  std::string w;
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (!data) return fail("no bytes");
  const std::optional<Header> h = read_header(data, size, &w);
  if (!h) return fail(w);
  constexpr uint32_t kPerAtom = 1u << kBitX | 1u << kBitV | 1u << kBitCgp;
  if (!(h->state_flags & kPerAtom))
    return fail("the state flags (" + std::to_string(h->state_flags) +
                ") name no positions, velocities or CG direction");
  std::optional<Entries> entries;
  for (int flags_after = 0; flags_after <= kMaxFlagsAfter && !entries; ++flags_after)
    if (size - h->flags_end >= 4 * uint64_t(flags_after))
      entries = read_entries(data, size, h->flags_end + 4 * uint64_t(flags_after), *h);
  if (!entries)
    return fail("no run of state entries for flags " + std::to_string(h->state_flags) + " with " +
                std::to_string(3 * h->atoms) + " reals per vector after the header");

  VariableMap m;
  m.source = "gromacs";
  for (const Entry& e : entries->list) {
    if (!per_atom(e.bit)) continue;
    Variable v;
    v.name = entry_name(e.bit);
    v.dtype = e.elem == 8 ? "F64BE" : "F32BE";
    v.elem_size = e.elem;
    v.shape = {h->atoms, 3};
    VarExtent ext;
    ext.file_off = e.off;
    ext.len = e.n * e.elem;
    ext.start = {0, 0};
    ext.shape = v.shape;
    v.extents.push_back(std::move(ext));
    v.key = var_key(v.name, v.dtype, v.shape.size());
    m.vars.push_back(std::move(v));
  }
  m.detail = "GROMACS checkpoint version " + std::to_string(h->version) + ", " +
             std::to_string(h->atoms) + " atoms, " + std::to_string(m.vars.size()) +
             " per-atom vector" + (m.vars.size() == 1 ? "" : "s") + " of " +
             (m.vars.front().elem_size == 8 ? "double" : "single") + " precision" +
             (entries->cut ? ", cut short after them (a checkpoint still being written)" : "");
  std::string bad = check_variable_map(m, size);
  if (!bad.empty()) return fail(bad);
  out = std::move(m);
  return true;
}

}  // namespace ckptfwd::schema
