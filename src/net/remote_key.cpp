#include "remote_key.hpp"

#include <string>

namespace taskring::net {

namespace {
constexpr uint64_t kTag = 1ull << 63;
constexpr int kOwnerShift = 55;
constexpr int kIdShift = 41;
constexpr int kGenShift = 33;
}  // namespace

uint64_t remote_key(int owner, uint32_t buffer_id, uint32_t generation) {
  return kTag | (static_cast<uint64_t>(owner & 0xff) << kOwnerShift) |
         (static_cast<uint64_t>(buffer_id & 0x3fff) << kIdShift) |
         (static_cast<uint64_t>(generation & 0xff) << kGenShift);
}

bool is_remote_key(uint64_t addr) { return (addr & kTag) != 0 && (addr & ((1ull << kGenShift) - 1)) == 0; }

KeyParts decode_remote_key(uint64_t key) {
  return KeyParts{static_cast<int>((key >> kOwnerShift) & 0xff), static_cast<uint32_t>((key >> kIdShift) & 0x3fff),
                  static_cast<uint32_t>((key >> kGenShift) & 0xff)};
}

Expected<RemoteTensor> describe_remote(const ChipTensor& t) {
  if (t.address_space != AddressSpace::HOST || !is_remote_key(t.buffer.addr))
    return invalid_argument("(" + t.describe() +
                            ") is not a remote tensor; L4 task arguments name remote buffers: build them with "
                            "NetWorker::remote_tensor");
  const KeyParts k = decode_remote_key(t.buffer.addr);
  return RemoteTensor{k.owner, k.buffer_id, k.generation, t.data_addr() - t.buffer.addr, t.extent_bytes()};
}

Expected<ChipTensor> make_remote_tensor(const RemoteTensor& d, uint64_t buffer_bytes, std::span<const uint32_t> shapes,
                                        DataType dtype) {
  const std::string who = "remote tensor (owner " + std::to_string(d.owner) + ", buffer " +
                          std::to_string(d.buffer_id) + ", generation " + std::to_string(d.generation) + ")";
  if (d.offset > buffer_bytes || d.nbytes > buffer_bytes - d.offset)
    return out_of_range(who + ": byte range [" + std::to_string(d.offset) + ", " + std::to_string(d.offset + d.nbytes) +
                        ") leaves the buffer's " + std::to_string(buffer_bytes) + " B");
  const size_t es = element_size(dtype);
  if (es == 0) return invalid_argument(who + ": bad dtype");
  if (d.offset % es != 0)
    return invalid_argument(who + ": offset " + std::to_string(d.offset) + " is not a multiple of the element size " +
                            std::to_string(es));
  uint64_t numel = 1;
  for (uint32_t s : shapes) numel *= s;
  if (shapes.empty() || numel * es != d.nbytes)
    return invalid_argument(who + ": shape covers " + std::to_string(numel * es) + " B, the range is " +
                            std::to_string(d.nbytes) + " B");
  std::vector<uint32_t> strides(shapes.size(), 1);
  for (size_t i = shapes.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * shapes[i];
  return try_make_tensor_strided(remote_key(d.owner, d.buffer_id, d.generation), buffer_bytes, shapes, strides,
                                 d.offset / es, dtype);
}

}  // namespace taskring::net
