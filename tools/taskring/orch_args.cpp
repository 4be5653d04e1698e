#include "orch_args.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "taskring/kernels/tile_cast.hpp"

namespace taskring::cli::orch {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_float_dtype(DataType t) {
  return t == DataType::FLOAT32 || t == DataType::FLOAT16 || t == DataType::BFLOAT16;
}

bool is_signed_int(DataType t) {
  return t == DataType::INT8 || t == DataType::INT16 || t == DataType::INT32 || t == DataType::INT64;
}

// Writes `v` into element i of `t`, converting to its dtype.
void set_element(HostTensor& t, uint64_t i, double v) {
  const size_t es = element_size(t.dtype);
  uint8_t* p = t.bytes.data() + i * es;
  switch (t.dtype) {
    case DataType::FLOAT32: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case DataType::FLOAT16: {
      uint16_t b = tile::float_to_fp16_bits(static_cast<float>(v));
      std::memcpy(p, &b, 2);
      return;
    }
    case DataType::BFLOAT16: {
      uint16_t b = tile::float_to_bf16_bits(static_cast<float>(v));
      std::memcpy(p, &b, 2);
      return;
    }
    case DataType::BOOL: *p = v != 0.0 ? 1 : 0; return;
    default: break;
  }
  uint64_t bits = is_signed_int(t.dtype) ? static_cast<uint64_t>(static_cast<int64_t>(v))
                                         : static_cast<uint64_t>(v < 0 ? 0 : v);
  std::memcpy(p, &bits, es);  // little-endian: the low bytes
}

const char* npy_descr(DataType t) {
  switch (t) {
    case DataType::FLOAT32: return "<f4";
    case DataType::FLOAT16: return "<f2";
    case DataType::BFLOAT16: return "<V2";  // NumPy has no bfloat16; raw 2-byte values
    case DataType::INT8: return "|i1";
    case DataType::INT16: return "<i2";
    case DataType::INT32: return "<i4";
    case DataType::INT64: return "<i8";
    case DataType::UINT8: return "|u1";
    case DataType::UINT16: return "<u2";
    case DataType::UINT32: return "<u4";
    case DataType::UINT64: return "<u8";
    case DataType::BOOL: return "|b1";
  }
  return "";
}

std::string shape_text(const std::vector<uint32_t>& shape, char sep) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? std::string(1, sep) : "") + std::to_string(shape[i]);
  return s;
}

// Reads a .npy file into `t` (whose dtype and shape come from the spec).
Status read_npy(const std::string& path, HostTensor& t) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("cannot open " + path);
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return invalid_argument(path + ": not a .npy file");
  }
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint8_t b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    header_len = b[0] | (b[1] << 8);
  } else {
    uint8_t b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  }
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) return invalid_argument(path + ": truncated header");
  const std::string want_descr = std::string("'") + npy_descr(t.dtype) + "'";
  if (header.find(want_descr) == std::string::npos) {
    return invalid_argument(path + ": header " + header + " does not hold descr " + want_descr + " (" +
                            std::string(data_type_name(t.dtype)) + ")");
  }
  if (header.find("'fortran_order': True") != std::string::npos) {
    return invalid_argument(path + ": Fortran-order arrays are not supported");
  }
  const auto open = header.find("'shape': (");
  const auto close = open == std::string::npos ? open : header.find(')', open);
  if (open == std::string::npos || close == std::string::npos) return invalid_argument(path + ": no shape in header");
  std::vector<uint32_t> shape;
  std::stringstream ss(header.substr(open + 10, close - open - 10));
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), ::isspace), item.end());
    if (!item.empty()) shape.push_back(static_cast<uint32_t>(std::stoul(item)));
  }
  uint64_t n = 1;
  for (uint32_t d : shape) n *= d;
  if (n != t.numel()) {
    return invalid_argument(path + ": holds " + std::to_string(n) + " elements (shape " + shape_text(shape, ',') +
                            ") but the spec asks for " + std::to_string(t.numel()));
  }
  if (!in.read(reinterpret_cast<char*>(t.bytes.data()), static_cast<std::streamsize>(t.bytes.size()))) {
    return invalid_argument(path + ": fewer data bytes than " + std::to_string(t.bytes.size()));
  }
  return Status::Ok();
}

Status fill(HostTensor& t, const std::string& init, const std::string& spec) {
  if (init.empty()) return Status::Ok();  // zeros
  if (init == "iota") {
    for (uint64_t i = 0; i < t.numel(); ++i) set_element(t, i, static_cast<double>(i));
    return Status::Ok();
  }
  if (init.rfind("rand:", 0) == 0) {
    char* end = nullptr;
    const unsigned long long seed = std::strtoull(init.c_str() + 5, &end, 0);
    if (end == init.c_str() + 5 || *end != '\0') {
      return invalid_argument("--tensor " + spec + ": rand:SEED needs an integer seed, got '" + init + "'");
    }
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::uniform_int_distribution<int> whole(0, 99);
    for (uint64_t i = 0; i < t.numel(); ++i) {
      set_element(t, i, is_float_dtype(t.dtype) ? real(gen) : static_cast<double>(whole(gen)));
    }
    return Status::Ok();
  }
  if (init[0] == '@') {
    Status s = read_npy(init.substr(1), t);
    return s.ok() ? s : invalid_argument("--tensor " + spec + ": " + s.message());
  }
  char* end = nullptr;
  const double v = std::strtod(init.c_str(), &end);
  if (end == init.c_str() || *end != '\0') {
    return invalid_argument("--tensor " + spec + ": initial value '" + init +
                            "' is not a number, iota, rand:SEED or @FILE.npy");
  }
  for (uint64_t i = 0; i < t.numel(); ++i) set_element(t, i, v);
  return Status::Ok();
}

}  // namespace

uint64_t HostTensor::numel() const {
  uint64_t n = 1;
  for (uint32_t d : shape) n *= d;
  return n;
}

void HostTensor::bind() {
  desc = make_tensor_external(bytes.data(), shape.data(), static_cast<uint32_t>(shape.size()), dtype);
}

Expected<DataType> parse_dtype(const std::string& text) {
  static const std::pair<const char*, DataType> kShort[] = {
      {"f32", DataType::FLOAT32}, {"f16", DataType::FLOAT16}, {"bf16", DataType::BFLOAT16},
      {"i8", DataType::INT8},     {"i16", DataType::INT16},   {"i32", DataType::INT32},
      {"i64", DataType::INT64},   {"u8", DataType::UINT8},    {"u16", DataType::UINT16},
      {"u32", DataType::UINT32},  {"u64", DataType::UINT64},  {"bool", DataType::BOOL}};
  const std::string l = lower(text);
  for (const auto& [name, t] : kShort) {
    if (l == name) return t;
  }
  if (auto t = parse_data_type(text)) return *t;
  return invalid_argument("unknown dtype '" + text + "' (f32, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64, bool)");
}

Expected<HostTensor> parse_tensor_spec(const std::string& spec, int index) {
  auto bad = [&](const std::string& why) {
    return invalid_argument("--tensor " + spec + ": " + why +
                            " (expected [NAME:]in|out|inout:DTYPE[SHAPE][=VALUE|=iota|=rand:SEED|=@FILE.npy])");
  };
  HostTensor t;
  t.name = "t" + std::to_string(index);
  std::string rest = spec;
  auto take_field = [&]() {
    const auto colon = rest.find(':');
    std::string f = rest.substr(0, colon);
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    return f;
  };
  std::string dir = take_field();
  if (dir != "in" && dir != "out" && dir != "inout") {
    t.name = dir;
    if (t.name.empty()) return bad("empty name");
    dir = take_field();
  }
  if (dir == "in") t.dir = Direction::kIn;
  else if (dir == "out") t.dir = Direction::kOut;
  else if (dir == "inout") t.dir = Direction::kInOut;
  else return bad("direction '" + dir + "' is not in, out or inout");
  const auto lb = rest.find('[');
  const auto rb = rest.find(']');
  if (lb == std::string::npos || rb == std::string::npos || rb < lb) return bad("no [SHAPE]");
  auto dt = parse_dtype(rest.substr(0, lb));
  if (!dt.ok()) return bad(dt.status().message());
  t.dtype = *dt;
  std::string dims = rest.substr(lb + 1, rb - lb - 1);
  std::replace(dims.begin(), dims.end(), 'x', ',');
  std::stringstream ss(dims);
  std::string d;
  while (std::getline(ss, d, ',')) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(d.c_str(), &end, 10);
    if (d.empty() || *end != '\0' || v == 0 || v > UINT32_MAX) return bad("dimension '" + d + "' is not in 1..2^32-1");
    t.shape.push_back(static_cast<uint32_t>(v));
  }
  if (t.shape.empty() || t.shape.size() > MAX_TENSOR_DIMS) {
    return bad("rank " + std::to_string(t.shape.size()) + " outside 1..5");
  }
  std::string init;
  const std::string after = rest.substr(rb + 1);
  if (!after.empty()) {
    if (after[0] != '=') return bad("unexpected '" + after + "' after the shape");
    init = after.substr(1);
  }
  uint64_t bytes = element_size(t.dtype);
  for (uint32_t s : t.shape) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(s), &bytes) || bytes > (1ull << 34)) {
      return bad("more than 16 GiB");
    }
  }
  t.nbytes = bytes;
  t.init = init;
  t.spec = spec;
  return t;
}

Status check_device_budget(const std::vector<HostTensor>& tensors, uint64_t arena_bytes, uint64_t ring_heap_bytes) {
  auto mib = [](uint64_t b) { return std::to_string((b + (1ull << 20) - 1) >> 20) + " MiB"; };
  const uint64_t room = arena_bytes > ring_heap_bytes ? arena_bytes - ring_heap_bytes : 0;
  uint64_t total = 0;
  const HostTensor* largest = nullptr;
  for (const HostTensor& t : tensors) {
    total += t.nbytes;  // each <= 16 GiB, so no overflow for any practical count
    if (!largest || t.nbytes > largest->nbytes) largest = &t;
  }
  if (total <= room) return Status::Ok();
  std::string what = tensors.size() == 1 ? "--tensor " + largest->spec + " needs " + mib(total)
                                         : std::to_string(tensors.size()) + " tensors need " + mib(total) +
                                               " (the largest, --tensor " + largest->spec + ", " +
                                               mib(largest->nbytes) + ")";
  return resource_exhausted(what + " of device memory; the sim arena holds " + mib(arena_bytes) +
                            " and its heap rings take " + mib(ring_heap_bytes) +
                            " (raise TASKRING_SIM_DEVICE_MEM_MB, lower PTO2_RING_HEAP or --ring-heap, or use smaller "
                            "tensors)");
}

Status check_tensor_names(const std::vector<HostTensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    for (size_t k = 0; k < i; ++k) {
      if (tensors[k].name == tensors[i].name) {
        return invalid_argument("--tensor " + tensors[i].spec + ": the name '" + tensors[i].name +
                                "' is already taken by --tensor " + tensors[k].spec);
      }
    }
  }
  return Status::Ok();
}

Status load(HostTensor& t) {
  t.bytes.assign(t.nbytes, 0);
  return fill(t, t.init, t.spec);
}

Expected<uint64_t> parse_scalar(const std::string& text) {
  std::string type;
  std::string value = text;
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    type = lower(text.substr(0, colon));
    value = text.substr(colon + 1);
  }
  auto bad = [&](const std::string& why) {
    return invalid_argument("--scalar " + text + ": " + why + " (expected [i32|u32|i64|u64|f32|f64:]VALUE)");
  };
  const std::string l = lower(value);
  const bool looks_float = l.find_first_of(".e") != std::string::npos && l.rfind("0x", 0) != 0;
  const bool is_float = type == "f32" || type == "f64" ||
                        (type.empty() && (looks_float || l == "inf" || l == "-inf" || l == "nan"));
  char* end = nullptr;
  if (is_float) {
    const double d = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0') return bad("not a number");
    return type == "f64" ? to_u64(d) : to_u64(static_cast<float>(d));
  }
  if (!type.empty() && type != "i32" && type != "u32" && type != "i64" && type != "u64") {
    return bad("unknown type '" + type + "'");
  }
  errno = 0;
  const bool negative = !value.empty() && value[0] == '-';
  const long long sv = negative ? std::strtoll(value.c_str(), &end, 0) : 0;
  const unsigned long long uv = negative ? 0 : std::strtoull(value.c_str(), &end, 0);
  if (end == value.c_str() || *end != '\0' || errno == ERANGE) return bad("not an integer in range");
  if (type == "i32") {
    if (negative ? (sv < INT32_MIN) : (uv > INT32_MAX)) return bad("outside int32");
    return to_u64(static_cast<int32_t>(negative ? sv : static_cast<long long>(uv)));
  }
  if (type == "u32") {
    if (negative || uv > UINT32_MAX) return bad("outside uint32");
    return to_u64(static_cast<uint32_t>(uv));
  }
  if (negative && type == "u64") return bad("negative value for u64");
  return negative ? static_cast<uint64_t>(sv) : static_cast<uint64_t>(uv);
}

double element_as_double(const HostTensor& t, uint64_t i) {
  const size_t es = element_size(t.dtype);
  const uint8_t* p = t.bytes.data() + i * es;
  uint64_t raw = 0;
  std::memcpy(&raw, p, es);
  switch (t.dtype) {
    case DataType::FLOAT32: return from_u64<float>(raw);
    case DataType::FLOAT16: return tile::fp16_bits_to_float(static_cast<uint16_t>(raw));
    case DataType::BFLOAT16: return tile::bf16_bits_to_float(static_cast<uint16_t>(raw));
    case DataType::INT8: return static_cast<int8_t>(raw);
    case DataType::INT16: return static_cast<int16_t>(raw);
    case DataType::INT32: return static_cast<int32_t>(raw);
    case DataType::INT64: return static_cast<double>(static_cast<int64_t>(raw));
    default: return static_cast<double>(raw);
  }
}

Status write_npy(const HostTensor& t, const std::string& path) {
  std::string shape = "(";
  for (uint32_t d : t.shape) shape += std::to_string(d) + ", ";
  if (t.shape.size() > 1) shape.resize(shape.size() - 1);
  if (t.shape.size() > 1) shape.back() = ')';
  else shape = "(" + std::to_string(t.shape[0]) + ",)";
  std::string header =
      std::string("{'descr': '") + npy_descr(t.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that magic (6) + version (2) + length (2) + header is a multiple
  // of 64, ending in a newline.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) return not_found("cannot write " + path);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  const char lb[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(lb, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.bytes.size()));
  if (!out) return internal_error("short write to " + path);
  return Status::Ok();
}

std::string summarize(const HostTensor& t) {
  std::string head = std::string(data_type_name(t.dtype)) + "[" + shape_text(t.shape, 'x') + "]: ";
  const uint64_t n = t.numel();
  double lo = element_as_double(t, 0), hi = lo, sum = 0.0;
  bool nan = false;
  for (uint64_t i = 0; i < n; ++i) {
    const double v = element_as_double(t, i);
    if (std::isnan(v)) nan = true;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  char buf[160];
  if (!nan && lo == hi) {
    std::snprintf(buf, sizeof(buf), "all %.9g", lo);
    return head + buf;
  }
  std::snprintf(buf, sizeof(buf), "min %.9g max %.9g mean %.9g%s first [", lo, hi, sum / static_cast<double>(n),
                nan ? " (has NaN)" : "");
  std::string s = head + buf;
  for (uint64_t i = 0; i < std::min<uint64_t>(n, 8); ++i) {
    std::snprintf(buf, sizeof(buf), "%s%.9g", i ? ", " : "", element_as_double(t, i));
    s += buf;
  }
  return s + (n > 8 ? ", ...]" : "]");
}

}  // namespace taskring::cli::orch
