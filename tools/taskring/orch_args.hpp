// Entry arguments of `taskring orch`, built from the command line:
//   --tensor [NAME:]in|out|inout:DTYPE[SHAPE][=VALUE|=iota|=rand:SEED|=@FILE.npy]
//   --scalar [TYPE:]VALUE
// plus .npy reading and writing and the one-line summary `--print` shows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "taskring/base/expected.hpp"
#include "taskring/tensor/task_args.hpp"

namespace taskring::cli::orch {

enum class Direction { kIn, kOut, kInOut };

// One --tensor: its host storage and the HOST descriptor over it.
struct HostTensor {
  std::string name;  // from the spec, or "t<index>"
  Direction dir = Direction::kIn;
  DataType dtype = DataType::FLOAT32;
  std::vector<uint32_t> shape;
  uint64_t nbytes = 0;         // size of the tensor, known before `bytes` is allocated
  std::string init;            // the spec's initialiser ("" zeros, VALUE, iota, rand:SEED, @FILE.npy)
  std::string spec;            // the --tensor text, for messages
  std::vector<uint8_t> bytes;  // empty until load()
  ChipTensor desc;             // set by bind()

  uint64_t numel() const;
  // Points desc at bytes (call once the vector no longer moves).
  void bind();
};

// Parses one --tensor spec; `index` names it when the spec has no name.
// Errors name the spec and the part that is wrong. Allocates no tensor
// memory: check_device_budget, then load, come after.
Expected<HostTensor> parse_tensor_spec(const std::string& spec, int index);

// Checks that the tensors fit the device before any host byte is allocated
// or filled: every tensor is placed in device memory for the run, next to the
// heap rings the runtime reserves there (`ring_heap_bytes`, their sum). The
// error names the largest tensor, the total and the arena's size (and the
// knob that sets it).
Status check_device_budget(const std::vector<HostTensor>& tensors, uint64_t arena_bytes, uint64_t ring_heap_bytes);

// Two tensors of one name (the name --print and --save use) are an error.
Status check_tensor_names(const std::vector<HostTensor>& tensors);

// Allocates `t.bytes` and fills it from the initialiser; `=@file.npy` is read
// here (its dtype and shape must match the spec).
Status load(HostTensor& t);

// Parses one --scalar into its 64-bit slot. Integers (decimal, 0x hex,
// negative) are stored as int64 bits; a value with '.', 'e', "inf" or "nan"
// is a float stored as FP32 bits (upstream's float scalars). A TYPE prefix
// (i32, u32, i64, u64, f32, f64) forces the packing; narrower types are
// zero-extended as upstream's add_scalar does.
Expected<uint64_t> parse_scalar(const std::string& text);

// Element i as a double (integer types exactly up to 2^53).
double element_as_double(const HostTensor& t, uint64_t i);

// Writes `t` as a NumPy .npy file (version 1.0, little-endian, C order).
Status write_npy(const HostTensor& t, const std::string& path);

// "FP32[16384]: all 47" or "FP32[4x4]: min 0 max 15 mean 7.5 first [0, 1, 2, 3, 4, 5, 6, 7]".
std::string summarize(const HostTensor& t);

// Parses a DataType from the short spellings (f32, f16, bf16, i8, i16, i32,
// i64, u8, u16, u32, u64, bool) or taskring's names (fp32, float32, int32...).
Expected<DataType> parse_dtype(const std::string& text);

}  // namespace taskring::cli::orch
