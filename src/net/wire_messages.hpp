// Wire messages: one struct per L4 message (wire.hpp's Msg), each with its
// encode/decode pair, so that a handler receives fields, never bytes.
//
//   std::vector<char> encode() const;   the whole message, header included
//   Status decode(Reader& r);           r is past the header (Reader::header);
//                                       fills the fields in order and returns
//                                       INVALID_ARGUMENT naming the message when
//                                       it is short or a field is out of range;
//                                       the fields read before the fault stay
//                                       set (a TASK's seq names the reply).
//
// Statuses travel as (code, message cut to kMaxErrorBytes by
// truncate_error). HEARTBEAT, SHUTDOWN and BYE have no fields (encode_empty).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "buffer_table.hpp"
#include "job_identity.hpp"
#include "taskring/kernels/comm_remote.hpp"
#include "taskring/net/net_worker.hpp"
#include "taskring/tensor/task_args.hpp"
#include "wire.hpp"

namespace taskring::net {

// HEARTBEAT, SHUTDOWN, BYE: the header alone.
std::vector<char> encode_empty(Msg type);

// HELLO, rank -> 0: who I am and how my node's init went.
struct HelloMsg {
  uint32_t protocol = 0;
  std::string version;  // the taskring build and compiler
  uint32_t pid = 0;
  std::string host;
  Status node;                     // the node's init result
  std::vector<std::string> names;  // the registered L4 callables
  JobIdentity job;
  std::vector<char> encode() const;
  // A HELLO of another protocol than `speaks` is read up to its protocol
  // only (OK): the rest may be laid out otherwise; the caller refuses it.
  Status decode(Reader& r, uint32_t speaks);
};
inline constexpr uint32_t kMaxHelloNames = 4096;

// WELCOME, 0 -> rank: READY (OK), or why the job does not start.
struct WelcomeMsg {
  Status verdict;
  std::vector<char> encode() const;
  Status decode(Reader& r);
};

// TASK, 0 -> rank: run a node task (at most node::kMaxTaskTensors tensors,
// kMaxTaskScalars scalars).
struct TaskMsg {
  uint64_t seq = 0;
  int32_t callable = -1;
  std::vector<ChipTensor> tensors;
  std::vector<TensorArgType> tags;  // one per tensor
  std::vector<uint64_t> scalars;
  std::vector<char> encode() const;
  Status decode(Reader& r);
};

// COMPLETION, rank -> 0: the Status of TASK `seq`.
struct CompletionMsg {
  uint64_t seq = 0;
  Status status;
  std::vector<char> encode() const;
  Status decode(Reader& r);
};

// CONTROL, 0 -> rank: allocate (a0 = bytes) or free (a0 = id, a1 = generation).
struct ControlMsg {
  uint64_t seq = 0;
  ControlOp op = ControlOp::kAlloc;
  uint64_t a0 = 0, a1 = 0;
  std::vector<char> encode() const;
  Status decode(Reader& r);
};

// CONTROL_REPLY, rank -> 0: the Status and the buffer (id, generation, bytes).
struct ControlReplyMsg {
  uint64_t seq = 0;
  Status status;
  BufferEntry entry;  // offset stays the owner's
  std::vector<char> encode() const;
  Status decode(Reader& r);
};

// FETCH or PUT, any -> owner: a range of one of the owner's buffers; the
// data travels on `tag`.
struct TransferMsg {
  Msg type = Msg::kFetch;  // kFetch or kPut
  int32_t tag = 0;
  uint32_t buffer_id = 0, generation = 0;
  uint64_t offset = 0, nbytes = 0;
  // 1: the requesting thread drives the transfer itself (data_mover.hpp):
  // the owner's replies go on reply_tag(tag), not to its progress thread.
  uint8_t direct = 0;
  std::vector<char> encode() const;
  Status decode(Reader& r);
};

// FETCH_REPLY, PUT_READY or PUT_DONE, owner -> requester: transfer `tag`'s Status.
struct TransferReplyMsg {
  Msg type = Msg::kFetchReply;  // kFetchReply, kPutReady or kPutDone
  int32_t tag = 0;
  Status status;
  std::vector<char> encode() const;
  Status decode(Reader& r);
};

// Every DOMAIN_* message names its domain: the n-th domain of a name.
struct DomainKey {
  std::string name;
  uint64_t seq = 0;
  bool operator==(const DomainKey&) const = default;
};

// DOMAIN_ARRIVED: these domain ranks of mine zeroed their windows (none:
// the fingerprint alone, a refusal), and my fingerprint of the domain.
struct DomainArrivedMsg {
  DomainKey key;
  std::vector<int32_t> ranks;
  uint64_t fingerprint = 0;
  std::vector<char> encode() const;
  Status decode(Reader& r);
};

// DOMAIN_DATA: requests of my members (domain rank `from`) to yours, a put's
// payload after its request. Built record by record (append) on the
// progress thread; decoded whole, payloads viewing the message.
struct DomainRecord {
  int32_t from = -1;
  kernels::comm::RemoteReq req{};
  std::string_view payload;  // kPut only
};
struct DomainDataMsg {
  DomainKey key;
  std::vector<DomainRecord> records;
  std::vector<char> encode() const;
  // Also INVALID_ARGUMENT for a put over kernels::comm::kRemoteChunkBytes.
  Status decode(Reader& r);
  // The header and key of a DOMAIN_DATA message, then one record at a time.
  static std::vector<char> start(const DomainKey& key);
  static void append(std::vector<char>& msg, const DomainRecord& rec);
};

// DOMAIN_ABORT: my run failed; end every wait of the domain.
struct DomainAbortMsg {
  DomainKey key;
  std::vector<char> encode() const;
  Status decode(Reader& r);
};

// DOMAIN_SHARE, the lowest member node of a host -> the other member nodes
// of that host: the one object of the domain on this host is descriptor
// `fd` of process `pid` (open it through /proc), its header names it `id`;
// `fingerprint` as in DOMAIN_ARRIVED.
struct DomainShareMsg {
  DomainKey key;
  int32_t pid = 0, fd = -1;
  uint64_t id = 0, fingerprint = 0;
  std::vector<char> encode() const;
  Status decode(Reader& r);
};

}  // namespace taskring::net
