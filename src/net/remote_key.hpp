// Remote keys: how a remote buffer appears inside a ChipTensor.
//
// The L4 engine infers dependencies with the TensorMap (src/deps), which keys on
// `buffer.addr` and compares byte ranges inside one buffer. A remote buffer
// therefore gets a synthetic address, its key, that no host pointer can
// equal (bit 63 set; user-space addresses on Linux x86-64/arm64 never have
// it) and that encodes the descriptor's identity:
//
//   bit 63: 1 | 62..55: owner rank | 54..41: buffer id | 40..33: generation | 32..0: 0
//
// A tensor over a remote buffer has buffer.addr = key, buffer.size = the
// buffer's bytes (< 2^32), and its view (start_offset, shapes, strides)
// inside it, so views of one buffer share a key and are ordered by overlap,
// whatever offset they start at, and different buffers (or owners, or
// generations) never alias. A key is never dereferenced: the rank that runs
// the task maps it to local memory (its own pool, or a staged copy).
#pragma once

#include <cstdint>
#include <span>

#include "taskring/base/expected.hpp"
#include "taskring/net/net_worker.hpp"
#include "taskring/tensor/chip_tensor.hpp"

namespace taskring::net {

struct KeyParts {
  int owner = -1;
  uint32_t buffer_id = 0;
  uint32_t generation = 0;
};

uint64_t remote_key(int owner, uint32_t buffer_id, uint32_t generation);
bool is_remote_key(uint64_t addr);
KeyParts decode_remote_key(uint64_t key);

// The descriptor a tensor argument names: identity from its key, `offset`
// and `nbytes` from its view's byte extent. INVALID_ARGUMENT when
// buffer.addr is not a remote key.
Expected<RemoteTensor> describe_remote(const ChipTensor& t);

// A row-major tensor over `d` inside a buffer of `buffer_bytes`; the shape
// must cover exactly d.nbytes and d.offset must be a multiple of the
// element size. Range checks against buffer_bytes name the field.
Expected<ChipTensor> make_remote_tensor(const RemoteTensor& d, uint64_t buffer_bytes, std::span<const uint32_t> shapes,
                                        DataType dtype);

}  // namespace taskring::net
