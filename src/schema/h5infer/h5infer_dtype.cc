#include "schema/h5infer/h5infer_dtype.h"

namespace ckptfwd::h5infer {

namespace {

bool has_variable_length(hid_t t) {
  switch (H5Tget_class(t)) {
    case H5T_VLEN:
      return true;
    case H5T_STRING:
      return H5Tis_variable_str(t) != 0;  // < 0 (error) counts as variable: skip it
    case H5T_ARRAY: {
      hid_t super = H5Tget_super(t);
      if (super < 0) return true;
      bool v = has_variable_length(super);
      H5Tclose(super);
      return v;
    }
    case H5T_COMPOUND: {
      int n = H5Tget_nmembers(t);
      if (n < 0) return true;
      for (int i = 0; i < n; ++i) {
        hid_t m = H5Tget_member_type(t, static_cast<unsigned>(i));
        if (m < 0) return true;
        bool v = has_variable_length(m);
        H5Tclose(m);
        if (v) return true;
      }
      return false;
    }
    case H5T_NO_CLASS:
    case H5T_NCLASSES:
      return true;
    default:
      return false;
  }
}

// "LE"/"BE", or "" for an order that is neither (VAX, mixed): such numbers are opaque.
const char* order_suffix(hid_t t) {
  switch (H5Tget_order(t)) {
    case H5T_ORDER_LE:
      return "LE";
    case H5T_ORDER_BE:
      return "BE";
    default:
      return "";
  }
}

// Integers of 1, 2, 4 or 8 bytes using all their bits; "" for any other (bit-packed
// precision or offset: the bytes are not plain numbers).
std::string integer_name(hid_t t, size_t size) {
  if (size != 1 && size != 2 && size != 4 && size != 8) return "";
  if (H5Tget_precision(t) != 8 * size || H5Tget_offset(t) != 0) return "";
  H5T_sign_t sign = H5Tget_sign(t);
  if (sign != H5T_SGN_NONE && sign != H5T_SGN_2) return "";
  std::string n = (sign == H5T_SGN_2 ? "I" : "U") + std::to_string(8 * size);
  if (size == 1) return n;
  const char* o = order_suffix(t);
  return *o ? n + o : "";
}

// IEEE binary32/binary64 only: the layout must be exactly the standard one.
std::string float_name(hid_t t, size_t size) {
  if (size != 4 && size != 8) return "";
  const char* o = order_suffix(t);
  if (!*o) return "";
  hid_t ref = size == 4 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
  size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0, rspos = 0, repos = 0, resize = 0,
         rmpos = 0, rmsize = 0;
  if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0 ||
      H5Tget_fields(ref, &rspos, &repos, &resize, &rmpos, &rmsize) < 0)
    return "";
  if (spos != rspos || epos != repos || esize != resize || mpos != rmpos || msize != rmsize ||
      H5Tget_ebias(t) != H5Tget_ebias(ref) || H5Tget_precision(t) != 8 * size ||
      H5Tget_offset(t) != 0)
    return "";
  return "F" + std::to_string(8 * size) + o;
}

}  // namespace

std::string dtype_name(hid_t t, uint32_t* elem_size) {
  if (has_variable_length(t)) return "";
  size_t size = H5Tget_size(t);
  // dtype names carry at most 9 digits (base/dtype.h); no real element comes near.
  if (size == 0 || size > 999999999) return "";
  *elem_size = static_cast<uint32_t>(size);
  std::string n;
  switch (H5Tget_class(t)) {
    case H5T_INTEGER:
      n = integer_name(t, size);
      break;
    case H5T_FLOAT:
      n = float_name(t, size);
      break;
    case H5T_STRING:
      return "STR" + std::to_string(size);
    case H5T_COMPOUND:
      return "CMP" + std::to_string(size);
    default:
      break;
  }
  return n.empty() ? "B" + std::to_string(size) : n;
}

}  // namespace ckptfwd::h5infer
