#include "data_mover.hpp"

#include <cstring>

namespace taskring::net {

namespace {
void put_desc(Writer& w, int tag, const RemoteTensor& d) {
  w.put(static_cast<int32_t>(tag)).put(d.buffer_id).put(d.generation).put(d.offset).put(d.nbytes);
}
Status read_status(Reader& r) {
  const auto code = static_cast<StatusCode>(r.get<int32_t>());
  std::string msg = r.str(kMaxErrorBytes);
  return Status(code, std::move(msg));
}
void put_status(Writer& w, const Status& s) {
  w.put(static_cast<int32_t>(s.code())).str(truncate_error(s.message()), kMaxErrorBytes);
}
}  // namespace

Expected<char*> DataMover::local(const RemoteTensor& d) const {
  auto e = own_.check(d);
  if (!e.ok()) return e.status();
  return pool_ + e->offset + d.offset;
}

Status DataMover::fetch(const RemoteTensor& src, void* dst, Deadline deadline) {
  return transfer(src, dst, nullptr, false, deadline);
}

Status DataMover::put(const RemoteTensor& dst, const void* src, Deadline deadline) {
  return transfer(dst, nullptr, src, true, deadline);
}

Status DataMover::transfer(const RemoteTensor& d, void* dst, const void* src, bool is_put, Deadline deadline) {
  if (d.owner < 0 || d.owner >= t_.size())
    return out_of_range("remote range names owner rank " + std::to_string(d.owner) + ", not in [0, " +
                        std::to_string(t_.size()) + ")");
  if (d.owner == t_.rank()) {
    auto p = local(d);
    if (!p.ok()) return p.status();
    if (d.nbytes > 0) std::memcpy(is_put ? *p : dst, is_put ? src : *p, d.nbytes);
    return Status::Ok();
  }
  auto x = std::make_shared<Xfer>();
  x->peer = d.owner;
  x->is_put = is_put;
  x->dst = dst;
  x->src = src;
  x->n = d.nbytes;
  t_.post([this, x, d] {
    const int tag = t_.next_tag();
    mine_[tag] = x;
    // The receive is posted before FETCH goes out: the owner sends the data
    // at once, with no reply round trip first.
    if (!x->is_put) t_.recv_data(d.owner, tag, x->dst, x->n, [this, tag](Status st) { finish(tag, st); });
    Writer w(x->is_put ? Msg::kPut : Msg::kFetch);
    put_desc(w, tag, d);
    t_.send(d.owner, w.take());
  });
  const std::string what = std::string(is_put ? "PUT to" : "FETCH from") + " rank " + std::to_string(d.owner);
  t_.expect(1);
  Status w = x->waiter.wait([&] { return x->done.load(std::memory_order_acquire); }, deadline, what.c_str());
  t_.expect(-1);
  TASKRING_RETURN_IF_ERROR(w);
  return x->status;
}

void DataMover::finish(int tag, Status s) {
  auto it = mine_.find(tag);
  if (it == mine_.end()) return;
  std::shared_ptr<Xfer> x = it->second;
  mine_.erase(it);
  x->status = std::move(s);
  x->done.store(true, std::memory_order_release);
  x->waiter.notify_all();
}

void DataMover::fail_peer(int rank, const Status& why) {
  std::vector<int> tags;
  for (auto& [tag, x] : mine_)
    if (x->peer == rank) tags.push_back(tag);
  for (int tag : tags) {
    t_.cancel_recv(tag);
    finish(tag, why);
  }
}

void DataMover::handle(int src, Msg type, Reader& r) {
  switch (type) {
    case Msg::kFetch:
    case Msg::kPut: {
      const int tag = r.get<int32_t>();
      RemoteTensor d;
      d.owner = t_.rank();
      d.buffer_id = r.get<uint32_t>();
      d.generation = r.get<uint32_t>();
      d.offset = r.get<uint64_t>();
      d.nbytes = r.get<uint64_t>();
      Expected<char*> p = r.ok() ? local(d) : Expected<char*>(r.error(msg_name(type)));
      // FETCH: the data when OK (the requester's receive is posted), else
      // FETCH_REPLY with the error. PUT: PUT_READY either way.
      if (!p.ok() || type == Msg::kPut) {
        Writer w(type == Msg::kFetch ? Msg::kFetchReply : Msg::kPutReady);
        w.put(static_cast<int32_t>(tag));
        put_status(w, p.status().ok() ? Status::Ok()
                                      : p.status().with_context(std::string(msg_name(type)) + " from rank " +
                                                                std::to_string(src)));
        t_.send(src, w.take());
      }
      if (!p.ok()) return;
      if (type == Msg::kFetch) {
        t_.send_data(src, tag, *p, d.nbytes, nullptr);
      } else {
        Transport* t = &t_;
        t_.recv_data(src, tag, *p, d.nbytes, [t, src, tag](Status s) {
          Writer done(Msg::kPutDone);
          done.put(static_cast<int32_t>(tag));
          put_status(done, s);
          t->send(src, done.take());
        });
      }
      return;
    }
    case Msg::kFetchReply:
    case Msg::kPutReady: {
      const int tag = r.get<int32_t>();
      Status s = read_status(r);
      auto it = mine_.find(tag);
      if (it == mine_.end()) return;
      if (!r.ok()) s = r.error(msg_name(type));
      if (type == Msg::kFetchReply) {
        // Only a refusal is answered: the data will not come.
        t_.cancel_recv(tag);
        finish(tag, s.ok() ? internal_error("FETCH_REPLY from rank " + std::to_string(src) + " without an error")
                           : s);
        return;
      }
      if (!s.ok()) {
        finish(tag, s);
        return;
      }
      t_.send_data(src, tag, it->second->src, it->second->n, nullptr);  // PUT_DONE finishes it
      return;
    }
    case Msg::kPutDone: {
      const int tag = r.get<int32_t>();
      Status s = read_status(r);
      finish(tag, r.ok() ? s : r.error("PUT_DONE"));
      return;
    }
    default:
      return;
  }
}

}  // namespace taskring::net
