// DataMover's direct transfers: the calling thread makes the requester's MPI
// calls (see data_mover.hpp).
#include <sched.h>

#include <algorithm>

#include "data_mover.hpp"
#include "wire_messages.hpp"

namespace taskring::net {

namespace {

// Room for any reply: header, tag, code and at most kMaxErrorBytes of text.
constexpr int kReplyBytes = static_cast<int>(kMaxErrorBytes) + 256;

// Posts one request per chunk of at most Transport::kChunk bytes.
void post_chunks(bool send, char* p, uint64_t n, int peer, int tag, MPI_Comm comm, std::vector<MPI_Request>* out) {
  const uint64_t count = std::max<uint64_t>(1, (n + Transport::kChunk - 1) / Transport::kChunk);
  for (uint64_t c = 0; c < count; ++c) {
    const uint64_t off = c * Transport::kChunk, len = std::min(Transport::kChunk, n - off);
    MPI_Request r;
    if (send)
      MPI_Isend(p + off, static_cast<int>(len), MPI_BYTE, peer, tag, comm, &r);
    else
      MPI_Irecv(p + off, static_cast<int>(len), MPI_BYTE, peer, tag, comm, &r);
    out->push_back(r);
  }
}

bool all_done(std::vector<MPI_Request>& reqs) {
  if (reqs.empty()) return true;
  int flag = 0;
  MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &flag, MPI_STATUSES_IGNORE);
  return flag != 0;
}

bool one_done(MPI_Request& r) {
  int flag = 0;
  MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  return flag != 0;
}

// Cancels what has not completed (a refused or abandoned transfer).
void cancel(std::vector<MPI_Request>& reqs) {
  for (MPI_Request& r : reqs) {
    if (r == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&r);
    MPI_Request_free(&r);
  }
  reqs.clear();
}

// The reply of type `want` in `buf`, or why it is not one.
Status reply_status(const std::vector<char>& buf, Msg want, int owner) {
  Reader r(buf.data(), buf.size());
  Msg type;
  TransferReplyMsg m;
  if (!r.header(&type) || type != want)
    return internal_error("rank " + std::to_string(owner) + " answered a direct transfer with another message");
  m.type = type;
  Status s = m.decode(r);
  return s.ok() ? m.status : s;
}

}  // namespace

template <typename Test>
int DataMover::drive(Xfer& x, Test&& test, Deadline deadline, const std::string& what, Status* why) {
  const uint64_t start = mono_ns();
  while (true) {
    int r = 0;
    {
      Transport::OtherThreadCall call(t_);
      r = test();
    }
    if (r != 0) return r;
    if (x.abandon.load(std::memory_order_acquire)) {
      *why = x.status;
      return -1;
    }
    if (deadline.expired()) {
      *why = deadline_exceeded(what + ": no answer before the deadline");
      return -1;
    }
    if (mono_ns() - start < Transport::kInFlightSpinNs) {
      sched_yield();  // as MPI's own blocking calls: the peer's side needs the core too
    } else {
      // A descheduled or lost peer: keep driving in slices (MPI's internal
      // steps ring nothing); fail_peer wakes the park.
      const uint64_t slice = std::min<uint64_t>(Transport::kBusySliceNs, deadline.remaining_ns());
      (void)x.waiter.wait([&] { return x.abandon.load(std::memory_order_acquire); }, Deadline::after_ns(slice),
                          what.c_str(), 0);
    }
  }
}

Status DataMover::transfer_direct(const RemoteTensor& d, void* dst, const void* src, bool is_put, Deadline deadline) {
  std::shared_ptr<Xfer> x = make_xfer(d, dst, src, is_put);
  const int tag = t_.next_tag();
  {
    std::lock_guard<std::mutex> lk(direct_mu_);
    direct_[tag] = x;
  }
  direct_count_.fetch_add(1, std::memory_order_relaxed);
  Status s = is_put ? put_direct(*x, d, tag, deadline) : fetch_direct(*x, d, tag, deadline);
  std::lock_guard<std::mutex> lk(direct_mu_);
  direct_.erase(tag);
  return s;
}

// The data and a refusal race: whichever completes first decides.
Status DataMover::fetch_direct(Xfer& x, const RemoteTensor& d, int tag, Deadline deadline) {
  const MPI_Comm comm = t_.comm();
  std::vector<char> reply(kReplyBytes);
  std::vector<MPI_Request> data, refusal(1);
  {
    Transport::OtherThreadCall call(t_);
    MPI_Irecv(reply.data(), kReplyBytes, MPI_BYTE, d.owner, reply_tag(tag), comm, &refusal[0]);
    post_chunks(false, static_cast<char*>(x.dst), x.n, d.owner, tag, comm, &data);
  }
  TransferMsg m{Msg::kFetch, tag, d.buffer_id, d.generation, d.offset, d.nbytes, 1};
  t_.send_any(d.owner, m.encode());
  Status why;
  const int got = drive(
      x, [&] { return all_done(data) ? 1 : one_done(refusal[0]) ? 2 : 0; }, deadline,
      "FETCH from rank " + std::to_string(d.owner), &why);
  Transport::OtherThreadCall call(t_);  // the cancels below
  if (got == 1) {
    cancel(refusal);
    return Status::Ok();
  }
  cancel(data);
  if (got == 2) {
    const Status s = reply_status(reply, Msg::kFetchReply, d.owner);
    return s.ok() ? internal_error("FETCH_REPLY from rank " + std::to_string(d.owner) + " without an error") : s;
  }
  cancel(refusal);
  return why;
}

// PUT, PUT_READY on the reply tag, the data, PUT_DONE on the reply tag.
Status DataMover::put_direct(Xfer& x, const RemoteTensor& d, int tag, Deadline deadline) {
  const MPI_Comm comm = t_.comm();
  const std::string what = "PUT to rank " + std::to_string(d.owner);
  std::vector<char> reply(kReplyBytes);
  std::vector<MPI_Request> ready(1), data;
  {
    Transport::OtherThreadCall call(t_);
    MPI_Irecv(reply.data(), kReplyBytes, MPI_BYTE, d.owner, reply_tag(tag), comm, &ready[0]);
  }
  TransferMsg m{Msg::kPut, tag, d.buffer_id, d.generation, d.offset, d.nbytes, 1};
  t_.send_any(d.owner, m.encode());
  Status why;
  if (drive(x, [&] { return all_done(ready) ? 1 : 0; }, deadline, what, &why) < 0) {
    Transport::OtherThreadCall call(t_);
    cancel(ready);
    return why;
  }
  ready.clear();
  TASKRING_RETURN_IF_ERROR(reply_status(reply, Msg::kPutReady, d.owner));
  std::vector<MPI_Request> done(1);
  {
    Transport::OtherThreadCall call(t_);
    MPI_Irecv(reply.data(), kReplyBytes, MPI_BYTE, d.owner, reply_tag(tag), comm, &done[0]);
    post_chunks(true, const_cast<char*>(static_cast<const char*>(x.src)), x.n, d.owner, tag, comm, &data);
  }
  if (drive(x, [&] { return all_done(data) && all_done(done) ? 1 : 0; }, deadline, what, &why) < 0) {
    Transport::OtherThreadCall call(t_);
    cancel(data);
    cancel(done);
    return why;
  }
  return reply_status(reply, Msg::kPutDone, d.owner);
}

}  // namespace taskring::net
