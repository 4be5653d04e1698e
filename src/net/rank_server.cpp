#include "rank_server.hpp"

#include <cstring>
#include <exception>

#include "node/dag/engine.hpp"
#include "remote_key.hpp"

namespace taskring::net {

void RankServer::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { loop(); });
}

void RankServer::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  node::bell_ring(*t_.doorbell(Transport::Channel::kExecutor));
  thread_.join();
}

void RankServer::reply(int src, uint64_t seq, const Status& s) {
  Writer w(Msg::kCompletion);
  w.put(seq).put(static_cast<int32_t>(s.code())).str(truncate_error(s.message()), kMaxErrorBytes);
  t_.send_any(src, w.take(), Transport::Channel::kEngine);
}

void RankServer::on_task(int src, Reader& r) {
  Job j;
  j.src = src;
  j.seq = r.get<uint64_t>();
  j.callable = r.get<int32_t>();
  const uint32_t n = r.get<uint32_t>();
  if (r.ok() && n <= static_cast<uint32_t>(node::kMaxTaskTensors)) {
    for (uint32_t i = 0; i < n && r.ok(); ++i) {
      j.tensors.push_back(r.get<ChipTensor>());
      j.tags.push_back(static_cast<TensorArgType>(r.get<int32_t>()));
    }
    const uint32_t ns = r.get<uint32_t>();
    if (ns <= static_cast<uint32_t>(node::kMaxTaskScalars))
      for (uint32_t i = 0; i < ns && r.ok(); ++i) j.scalars.push_back(r.get<uint64_t>());
    else
      r.fail();
  }
  if (!r.ok() || n > static_cast<uint32_t>(node::kMaxTaskTensors)) {
    reply(src, j.seq, r.error("TASK"));
    return;
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back(std::move(j));
    queued_.fetch_add(1, std::memory_order_release);
  }
  node::bell_ring(*t_.doorbell(Transport::Channel::kExecutor));
}

void RankServer::take_direct() {
  t_.take_all(MPI_ANY_SOURCE, Transport::Channel::kExecutor, Msg::kTask,
              [this](int from, Reader& r) { on_task(from, r); });
}

void RankServer::on_control(int src, Reader& r) {
  const uint64_t seq = r.get<uint64_t>();
  const auto op = static_cast<ControlOp>(r.get<uint32_t>());
  const uint64_t a0 = r.get<uint64_t>(), a1 = r.get<uint64_t>();
  Status st;
  BufferEntry e;
  if (!r.ok()) {
    st = r.error("CONTROL");
  } else if (op == ControlOp::kAlloc) {
    auto got = own_.alloc(a0);
    if (got.ok()) {
      e = *got;
      Expected<char*> p = mover_.local(RemoteTensor{t_.rank(), e.id, e.generation, 0, e.bytes});
      if (p.ok()) std::memset(*p, 0, e.bytes);
    }
    st = got.status();
  } else if (op == ControlOp::kFree) {
    st = own_.free(static_cast<uint32_t>(a0), static_cast<uint32_t>(a1));
  } else {
    st = invalid_argument("CONTROL op " + std::to_string(static_cast<uint32_t>(op)) + " is unknown");
  }
  Writer w(Msg::kControlReply);
  w.put(seq).put(static_cast<int32_t>(st.code())).str(truncate_error(st.message()), kMaxErrorBytes);
  w.put(e.id).put(e.generation).put(e.bytes);
  t_.send(src, w.take());
}

void RankServer::loop() {
  node::ShmBell& bell = *t_.doorbell(Transport::Channel::kExecutor);
  auto ready = [&] {
    take_direct();
    return queued_.load(std::memory_order_acquire) > 0 || stop_.load(std::memory_order_acquire);
  };
  while (true) {
    // Parks on this rank's executor doorbell: rung by rank 0 after a direct
    // TASK, by on_task() and by stop(). The probe in ready() is an MPI call,
    // so the spin is short.
    (void)node::bell_wait(bell, ready, [] { return Status::Ok(); }, Deadline::after_ms(1000), "an L4 task",
                          1'000'000'000ull, kSpin);
    if (stop_.load(std::memory_order_acquire)) return;
    Job j;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (queue_.empty()) continue;
      j = std::move(queue_.front());
      queue_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    reply(j.src, j.seq, execute(j));
  }
}

Status RankServer::execute(const Job& j) {
  if (j.callable < 0 || j.callable >= static_cast<int>(cfg_.fns.size()))
    return not_found("L4 callable id " + std::to_string(j.callable) + " is not registered on rank " +
                     std::to_string(t_.rank()));
  const std::string who = "node task '" + cfg_.names[static_cast<size_t>(j.callable)] + "'";
  if (!poisoned_.ok()) return poisoned_.with_context(who);
  const Deadline deadline = Deadline::after_ms(cfg_.transfer_timeout_ms);
  struct Staged {
    RemoteTensor desc;
    char* local;
    bool write_back;
  };
  std::vector<ChipTensor> local = j.tensors;
  std::vector<Staged> staged;
  uint64_t used = 0;
  for (size_t i = 0; i < local.size(); ++i) {
    const std::string arg = who + ": argument " + std::to_string(i);
    auto d = describe_remote(j.tensors[i]);
    if (!d.ok()) return d.status().with_context(arg);
    ChipTensor& t = local[i];
    if (d->owner == t_.rank()) {
      auto e = own_.check(*d);
      if (!e.ok()) return e.status().with_context(arg);
      auto base = mover_.local(RemoteTensor{d->owner, d->buffer_id, d->generation, 0, 0});
      if (!base.ok()) return base.status().with_context(arg);
      t.buffer.addr = reinterpret_cast<uintptr_t>(*base);
      t.buffer.size = e->bytes;
      continue;
    }
    const uint64_t at = (used + 63) / 64 * 64;
    if (at > cfg_.staging_bytes || d->nbytes > cfg_.staging_bytes - at)
      return resource_exhausted(arg + ": " + std::to_string(d->nbytes) + " B from rank " +
                                std::to_string(d->owner) + " do not fit in the staging area (NetConfig::staging_bytes=" +
                                std::to_string(cfg_.staging_bytes) + ", " + std::to_string(at) + " B in use)");
    char* p = cfg_.staging + at;
    used = at + d->nbytes;
    Status f = mover_.fetch(*d, p, deadline);
    if (f.code() == StatusCode::kDeadlineExceeded) {
      // The receive may still land in the staging area later: no later
      // task may use it.
      poisoned_ = f.with_context("an earlier transfer into this rank's staging area timed out");
    }
    if (!f.ok()) return f.with_context(arg + ": fetching from rank " + std::to_string(d->owner));
    t.buffer.addr = reinterpret_cast<uintptr_t>(p);
    t.buffer.size = d->nbytes;
    t.start_offset = 0;
    const TensorArgType tag = j.tags[i];
    staged.push_back(Staged{*d, p, tag == TensorArgType::INOUT || tag == TensorArgType::OUTPUT_EXISTING});
  }
  ChipTaskArgs args;
  for (size_t i = 0; i < local.size(); ++i) args.add_tensor(local[i], j.tags[i]);
  if (!j.scalars.empty()) args.add_scalars(j.scalars.data(), static_cast<int>(j.scalars.size()));
  if (args.has_error()) return invalid_argument(who + ": " + args.error_msg());
  Status s;
  try {
    s = cfg_.fns[static_cast<size_t>(j.callable)](node_, args);
  } catch (const std::exception& e) {
    s = internal_error(std::string("threw: ") + e.what());
  } catch (...) {
    s = internal_error("threw a non-std exception");
  }
  if (!s.ok()) return s.with_context(who);
  for (const Staged& st : staged) {
    if (!st.write_back) continue;
    Status p = mover_.put(st.desc, st.local, deadline);
    if (!p.ok()) return p.with_context(who + ": writing back to rank " + std::to_string(st.desc.owner));
  }
  return Status::Ok();
}

}  // namespace taskring::net
