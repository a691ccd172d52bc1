// apply_schema_rule: walks a file's bytes along a parsed rule (schema_ast.h) and makes one
// variable per field. The bytes are hostile: every size is computed with overflow checks
// and compared with the bytes left before anything is read, and a repeat count is bounded
// by the bytes left, so the work done is bounded by the file size times the rule size.
#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "schema/schema_ast.h"
#include "schema/schema_lang.h"

namespace ckptfwd::schema {

namespace {

class Walker {
 public:
  Walker(const SchemaRule& r, const uint8_t* d, uint64_t n, uint64_t max_extents, int64_t rank)
      : r_(r),
        d_(d),
        size_(n),
        max_extents_(max_extents),
        rank_(rank),
        vals_(r.n_slots, 0),
        unusable_(r.n_slots, Unusable::kNo) {
    vars_.resize(r.n_vars);
    init_vars(r.items, false);
  }

  bool run(std::string* why) {
    bool ok = walk(r_.items, false);
    if (ok && pos_ != size_ && !tail_) {  // after a tail: a partial element, residual
      ok = fail(std::to_string(size_ - pos_) + " bytes left over at offset " +
                std::to_string(pos_) + " after the last field (the rule has no [*] tail)");
    }
    if (!ok && why) *why = why_;
    return ok;
  }

  std::vector<Variable>& vars() { return vars_; }
  // Placements the rule gives but this file cannot have, with the reason ("" if none).
  const std::string& dropped() const { return dropped_; }

 private:
  void init_vars(const std::vector<Item>& items, bool in_repeat) {
    for (const Item& it : items) {
      if (it.kind == Item::kRepeat) {
        init_vars(it.body, true);
        continue;
      }
      const TypeInfo& ti = type_info(it.type);
      Variable& v = vars_[it.var];
      v.name = it.name;
      v.dtype = ti.dtype;
      if (ti.ordered) v.dtype += r_.big_endian ? "BE" : "LE";
      v.elem_size = ti.size;
      // In a repeat group the iterations are stacked along the first dimension; a scalar
      // becomes an array of one value per iteration.
      size_t rank = in_repeat && it.dims.empty() ? 1 : it.dims.size();
      v.shape.assign(rank, 0);
      v.key = var_key(v.name, v.dtype, rank);
    }
  }

  bool fail(const std::string& msg) {
    why_ = msg;
    return false;
  }

  std::string at(const Item& it) const {
    return (it.kind == Item::kField ? "field '" + it.name + "'"
                                    : "repeat (line " + std::to_string(it.line) + ")") +
           " at offset " + std::to_string(pos_);
  }

  // Evaluates e; false (with the reason) on overflow, division by zero or a value that
  // does not fit a signed 64-bit number.
  bool eval(const Expr& e, const Item& it, const std::string& what, int64_t* out) {
    stack_.clear();
    for (const ExprOp& op : e) {
      if (op.kind == ExprOp::kLiteral) {
        stack_.push_back(op.value);
        continue;
      }
      if (op.kind == ExprOp::kField) {
        size_t s = static_cast<size_t>(op.value);
        if (unusable_[s] == Unusable::kTooBig)
          return fail(at(it) + ": the value of '" + r_.slot_names[s] + "' in its " + what +
                      " is too large for a size");
        if (unusable_[s] == Unusable::kNotWhole)
          return fail(at(it) + ": the value of '" + r_.slot_names[s] + "' in its " + what +
                      " is not a whole number (a float used as a size must hold one)");
        if (unusable_[s] == Unusable::kOutOfRange)
          return fail(at(it) + ": the value of '" + r_.slot_names[s] + "' in its " + what +
                      " is not a finite number up to 2^53 (a float used as a size must be one)");
        stack_.push_back(vals_[s]);
        continue;
      }
      if (op.kind == ExprOp::kRank) {
        if (rank_ < 0)
          return fail(at(it) + ": its " + what + " uses rank, and the writer's rank is not known");
        stack_.push_back(rank_);
        continue;
      }
      if (op.kind == ExprOp::kNeg) {
        if (stack_.back() == INT64_MIN) return fail(at(it) + ": overflow in its " + what);
        stack_.back() = -stack_.back();
        continue;
      }
      int64_t b = stack_.back();
      stack_.pop_back();
      int64_t a = stack_.back(), v = 0;
      bool over = false;
      switch (op.kind) {
        case ExprOp::kAdd:
          over = __builtin_add_overflow(a, b, &v);
          break;
        case ExprOp::kSub:
          over = __builtin_sub_overflow(a, b, &v);
          break;
        case ExprOp::kMul:
          over = __builtin_mul_overflow(a, b, &v);
          break;
        case ExprOp::kDiv:
        case ExprOp::kMod:
          if (b == 0) return fail(at(it) + ": division by zero in its " + what);
          over = a == INT64_MIN && b == -1;
          if (!over) v = op.kind == ExprOp::kDiv ? a / b : a % b;
          break;
        default:
          break;
      }
      if (over) return fail(at(it) + ": overflow in its " + what);
      stack_.back() = v;
    }
    *out = stack_.back();
    return true;
  }

  // The value of numeric scalar it, at pos_, into its slot. A float counts as the whole
  // number it holds (a record length a writer keeps in a double); any other float, and an
  // unsigned value above INT64_MAX, marks the slot unusable in a size.
  void read_value(const Item& it) {
    const TypeInfo& ti = type_info(it.type);
    uint64_t u = 0;
    for (uint32_t i = 0; i < ti.size; ++i) {
      uint32_t shift = 8 * (r_.big_endian ? ti.size - 1 - i : i);
      u |= uint64_t(d_[pos_ + i]) << shift;
    }
    size_t s = static_cast<size_t>(it.slot);
    unusable_[s] = Unusable::kNo;
    if (!ti.integer) {
      double v;
      if (ti.size == 4) {
        float f;
        uint32_t b = static_cast<uint32_t>(u);
        memcpy(&f, &b, sizeof(f));
        v = f;
      } else {
        memcpy(&v, &u, sizeof(v));
      }
      // Whole numbers up to 2^53 (every one of them exact in a double).
      constexpr double kMax = 9007199254740992.0;
      if (!(v >= -kMax && v <= kMax)) {  // NaN too
        unusable_[s] = Unusable::kOutOfRange;
        vals_[s] = 0;
        return;
      }
      if (v != static_cast<double>(static_cast<int64_t>(v))) {
        unusable_[s] = Unusable::kNotWhole;
        vals_[s] = 0;
        return;
      }
      vals_[s] = static_cast<int64_t>(v);
      return;
    }
    if (ti.is_signed && ti.size < 8 && (u >> (8 * ti.size - 1)) & 1)
      u |= ~uint64_t(0) << (8 * ti.size);
    if (!ti.is_signed && u > static_cast<uint64_t>(INT64_MAX)) unusable_[s] = Unusable::kTooBig;
    vals_[s] = static_cast<int64_t>(u);
  }

  bool field(const Item& it, bool in_repeat) {
    const TypeInfo& ti = type_info(it.type);
    std::vector<uint64_t> dims(it.dims.size());
    uint64_t row = ti.size;  // bytes of one element, then of one slice along dimension 0
    for (size_t k = it.dims.size(); k-- > 0;) {
      if ((it.tail || !it.until.empty()) && k == 0) break;
      int64_t v = 0;
      std::string what = "dimension " + std::to_string(k + 1);
      if (!eval(it.dims[k], it, what, &v)) return false;
      if (v < 0) return fail(at(it) + ": " + what + " is negative (" + std::to_string(v) + ")");
      dims[k] = static_cast<uint64_t>(v);
      if (__builtin_mul_overflow(row, dims[k], &row))
        return fail(at(it) + ": its size in bytes overflows");
    }
    const uint64_t left = size_ - pos_;
    uint64_t bytes = row;
    if (!it.until.empty()) {
      // Up to and including the first marker from here (one-byte elements: the parser's).
      const void* hit = memmem(d_ + pos_, left, it.until.data(), it.until.size());
      if (!hit)
        return fail(at(it) + ": its marker \"" + marker_text(it.until) + "\" is not in the " +
                    std::to_string(left) + " bytes left");
      dims[0] =
          static_cast<uint64_t>(static_cast<const uint8_t*>(hit) - (d_ + pos_)) + it.until.size();
      bytes = dims[0];
    }
    if (it.tail) {
      if (row == 0 && left > 0)
        return fail(at(it) + ": the [*] field has elements of 0 bytes and cannot take the " +
                    std::to_string(left) + " bytes left");
      // As many whole elements as are left; a partial element stays residual.
      dims[0] = row == 0 ? 0 : left / row;
      tail_ = true;
      bytes = dims[0] * row;
    }
    if (bytes > left)
      return fail("file too short: " + at(it) + " needs " + std::to_string(bytes) +
                  " bytes, only " + std::to_string(left) + " left");
    if (it.slot >= 0) read_value(it);
    Variable& v = vars_[it.var];
    VarExtent e;
    e.file_off = pos_;
    e.len = bytes;
    if (!in_repeat) {
      v.shape = dims;
      e.start.assign(dims.size(), 0);
      e.shape = dims;
    } else if (dims.empty()) {
      e.start = {v.shape[0]};
      e.shape = {1};
      ++v.shape[0];  // bounded by the file size: every iteration read a byte
    } else {
      e.start.assign(dims.size(), 0);
      e.start[0] = v.shape[0];
      e.shape = dims;
      if (__builtin_add_overflow(v.shape[0], dims[0], &v.shape[0]))
        return fail(at(it) + ": its repeated first dimension overflows");
      // Iterations may differ in the other dimensions: the variable's shape bounds them all.
      for (size_t k = 1; k < dims.size(); ++k) v.shape[k] = std::max(v.shape[k], dims[k]);
    }
    if (bytes > 0) {
      if (max_extents_ && ++extents_ > max_extents_)
        return fail(at(it) + ": the split has more than " + std::to_string(max_extents_) +
                    " pieces, too many short ones to store the file by variable");
      v.extents.push_back(std::move(e));
    }
    pos_ += bytes;
    if (!it.at.empty()) place(it, v);
    return true;
  }

  // The field's `at [..] in [..]` into v. A placement that cannot be evaluated or does not
  // hold the variable is dropped (the split stays good) and named in dropped().
  void place(const Item& it, Variable& v) {
    std::vector<uint64_t> start(it.at.size()), global(it.in.size());
    std::string why;
    for (size_t k = 0; k < it.at.size() && why.empty(); ++k) {
      for (auto [e, out, what] : {std::tuple(&it.at[k], &start[k], "placement"),
                                  std::tuple(&it.in[k], &global[k], "global shape")}) {
        int64_t x = 0;
        const std::string saved = why_;
        if (!eval(*e, it, std::string(what) + " (dimension " + std::to_string(k + 1) + ")", &x))
          why = why_;
        else if (x < 0)
          why = "its " + std::string(what) + " is negative in dimension " + std::to_string(k + 1);
        why_ = saved;
        if (!why.empty()) break;
        *out = static_cast<uint64_t>(x);
      }
    }
    if (why.empty()) {
      v.global_start = std::move(start);
      v.global_shape = std::move(global);
      why = bad_placement(v);
      if (why.empty()) return;
      v.global_start.clear();
      v.global_shape.clear();
    }
    dropped_ += (dropped_.empty() ? "" : "; ") + std::string("placement of '") + it.name +
                "' not kept: " + why;
  }

  // Iteration i of repeat group it; a failure names the innermost iteration it happened in.
  bool iteration(const Item& it, uint64_t i) {
    if (walk(it.body, true)) return true;
    if (!in_iteration_)
      why_ += " (iteration " + std::to_string(i) + " of the repeat" + (it.until_end ? " *" : "") +
              " at line " + std::to_string(it.line) + ")";
    in_iteration_ = true;
    return false;
  }

  // `repeat * { }`: iterations until the bytes end, each taking at least one byte (an
  // empty one would repeat forever); one cut short by the end of the file does not fit.
  bool repeat_until_end(const Item& it) {
    for (uint64_t i = 0; pos_ < size_; ++i) {
      const uint64_t start = pos_;
      if (!iteration(it, i)) return false;
      if (pos_ == start)
        return fail(at(it) + ": iteration " + std::to_string(i) +
                    " of the repeat * read no bytes (it would repeat forever)");
    }
    return true;
  }

  bool repeat(const Item& it) {
    if (it.until_end) return repeat_until_end(it);
    int64_t c = 0;
    if (!eval(it.count, it, "count", &c)) return false;
    if (c < 0) return fail(at(it) + ": negative count (" + std::to_string(c) + ")");
    const uint64_t count = static_cast<uint64_t>(c), left = size_ - pos_;
    if (it.min_bytes > 0 && count > left / it.min_bytes)
      return fail(at(it) + ": count " + std::to_string(count) + " needs at least " +
                  std::to_string(it.min_bytes) + " bytes per iteration, only " +
                  std::to_string(left) + " bytes left");
    std::vector<uint64_t> before(it.end_var - it.first_var);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t start = pos_;
      for (size_t v = it.first_var; v < it.end_var; ++v)
        before[v - it.first_var] = vars_[v].shape.empty() ? 0 : vars_[v].shape[0];
      if (!iteration(it, i)) return false;
      if (pos_ == start && i + 1 < count) {
        // An iteration that read no bytes read no field values either, so every later one
        // is the same: account for them at once instead of looping a hostile count.
        const uint64_t rest = count - i - 1;
        for (size_t v = it.first_var; v < it.end_var; ++v) {
          if (vars_[v].shape.empty()) continue;
          uint64_t grew = vars_[v].shape[0] - before[v - it.first_var], add = 0;
          if (__builtin_mul_overflow(grew, rest, &add) ||
              __builtin_add_overflow(vars_[v].shape[0], add, &vars_[v].shape[0]))
            return fail(at(it) + ": the shape of '" + vars_[v].name + "' overflows");
        }
        break;
      }
    }
    return true;
  }

  bool walk(const std::vector<Item>& items, bool in_repeat) {
    for (const Item& it : items)
      if (!(it.kind == Item::kField ? field(it, in_repeat) : repeat(it))) return false;
    return true;
  }

  const SchemaRule& r_;
  const uint8_t* d_;
  const uint64_t size_;
  const uint64_t max_extents_;  // 0: no bound
  const int64_t rank_;          // the writer's rank, -1 if not known
  std::string dropped_;
  uint64_t extents_ = 0;
  uint64_t pos_ = 0;
  std::vector<int64_t> vals_;
  enum class Unusable : uint8_t { kNo, kTooBig, kNotWhole, kOutOfRange };
  std::vector<Unusable> unusable_;  // why a slot's value cannot be a size
  std::vector<int64_t> stack_;
  std::vector<Variable> vars_;
  std::string why_;
  bool in_iteration_ = false;  // why_ already names the innermost iteration
  bool tail_ = false;          // the [*] field was walked
};

}  // namespace

uint64_t fine_split_limit(const SchemaRule& rule, uint64_t size) {
  return kFineMapExtents * std::max<uint64_t>(rule.n_vars, 1) + size / kMinMeanExtent;
}

bool apply_schema_rule(const SchemaRule& rule, const uint8_t* data, uint64_t size, VariableMap& out,
                       std::string* why, uint64_t max_extents, int64_t rank) {
  Walker w(rule, data, size, max_extents, rank);
  if (!w.run(why)) return false;
  VariableMap m;
  m.source = "schema";
  m.detail = describe_rule(rule);
  if (!w.dropped().empty()) m.detail += "; " + w.dropped();
  m.vars = std::move(w.vars());
  // The walk promises a valid map; a bug here must not become a wrong split.
  std::string bad = check_variable_map(m, size);
  if (!bad.empty()) {
    if (why) *why = "internal error, the split is inconsistent: " + bad;
    return false;
  }
  out = std::move(m);
  return true;
}

}  // namespace ckptfwd::schema
