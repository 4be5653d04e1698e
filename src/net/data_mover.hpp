// DataMover: bytes of remote buffers between ranks, MPI point-to-point.
//
// Fetch (read a remote range into local memory):
//   requester: posts the receive on `tag`, FETCH{tag, id, gen, offset, n} -> owner
//   owner:     when OK the n bytes on `tag` (done when the receive completes),
//              else FETCH_REPLY{tag, error} (the requester cancels its receive)
// Put (write local memory into a remote range):
//   requester: PUT{tag, ...} -> owner
//   owner:     posts the receive into its pool, PUT_READY{tag, status}
//   requester: sends the n bytes on `tag`
//   owner:     PUT_DONE{tag, status} once they landed
// The owner validates every request against its BufferTable (id,
// generation, range) and answers a bad one with the error instead of data.
// PUT_DONE makes a write visible before the writer reports its task done, so
// a later reader (ordered after it by the L4 dependency) sees the bytes. A
// range owned by the caller's own rank is a memcpy.
//
// fetch()/put() block the calling thread (never the progress thread) until
// the transfer finished, the peer is lost, or the deadline passes.
//
// Direct transfers (Transport::direct(owner): MPI_THREAD_MULTIPLE, the owner
// on this host). The calling thread makes the requester's MPI calls itself:
// it posts the receives (the data of a FETCH, the owner's reply on
// reply_tag(tag)), sends the request with the DIRECT mark (ringing the
// owner), and drives its own requests with MPI_Test, yielding the core
// between tests as MPI's blocking calls do (Open MPI moves a large message's
// fragments only while both sides call into it), for up to
// Transport::kInFlightSpinNs without completion, then in kBusySliceNs
// parks. The owner's progress thread serves it as before but answers on
// reply_tag(tag), and sends a FETCH's data without ringing the requester's
// progress thread (which has no part in it). So no thread of the
// requester's but the caller is on the path: no post to the progress
// thread, no wake back at the end. A lost
// peer (fail_peer) or the deadline cancels the caller's requests.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "buffer_table.hpp"
#include "transport.hpp"

namespace taskring::net {

struct TransferMsg;
struct TransferReplyMsg;

class DataMover {
 public:
  DataMover(Transport& t, BufferTable& own, char* pool_base) : t_(t), own_(own), pool_(pool_base) {}

  Status fetch(const RemoteTensor& src, void* dst, Deadline deadline);
  Status put(const RemoteTensor& dst, const void* src, Deadline deadline);

  // Progress thread: the data messages (FETCH ... PUT_DONE).
  void handle(int src, Msg type, Reader& r);
  // Progress thread: fails every transfer with `rank`.
  void fail_peer(int rank, const Status& why);

  // Owner side: where `d` lives in this rank's pool, after checking it.
  Expected<char*> local(const RemoteTensor& d) const;

  // How many transfers took the direct path (tests).
  uint64_t direct_transfers() const { return direct_count_.load(std::memory_order_relaxed); }

 private:
  struct Xfer {
    int peer = -1;
    bool is_put = false;
    void* dst = nullptr;
    const void* src = nullptr;
    uint64_t n = 0;
    std::atomic<bool> done{false};
    Status status;
    Waiter waiter;
    // Direct transfers: set by fail_peer (status first), read by the caller.
    std::atomic<bool> abandon{false};
  };
  static std::shared_ptr<Xfer> make_xfer(const RemoteTensor& d, void* dst, const void* src, bool is_put);
  Status transfer(const RemoteTensor& d, void* dst, const void* src, bool is_put, Deadline deadline);
  Status transfer_direct(const RemoteTensor& d, void* dst, const void* src, bool is_put, Deadline deadline);
  Status fetch_direct(Xfer& x, const RemoteTensor& d, int tag, Deadline deadline);
  Status put_direct(Xfer& x, const RemoteTensor& d, int tag, Deadline deadline);
  // Drives the caller's requests until `test()` returns non-zero (returned),
  // fail_peer abandons `x` or the deadline passes (-1, `*why` set).
  template <typename Test>
  int drive(Xfer& x, Test&& test, Deadline deadline, const std::string& what, Status* why);
  void finish(int tag, Status s);
  // A FETCH or PUT for a range of ours (`decoded`: its decode's Status).
  void serve(int src, const TransferMsg& m, const Status& decoded);
  // FETCH_REPLY / PUT_READY / PUT_DONE of a transfer of ours; `s` is the
  // reply's Status, or its decode error.
  void on_reply(int src, const TransferReplyMsg& m, const Status& s);

  Transport& t_;
  BufferTable& own_;
  char* pool_;
  std::map<int, std::shared_ptr<Xfer>> mine_;  // by tag; progress thread only
  std::mutex direct_mu_;
  std::map<int, std::shared_ptr<Xfer>> direct_;  // by tag, under direct_mu_: for fail_peer
  std::atomic<uint64_t> direct_count_{0};
};

}  // namespace taskring::net
