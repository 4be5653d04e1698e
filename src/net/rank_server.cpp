#include "rank_server.hpp"

#include <cstring>
#include <exception>

#include "node/dag/engine.hpp"
#include "remote_key.hpp"
#include "taskring/base/align.hpp"
#include "taskring/base/clock.hpp"
#include "wire_messages.hpp"

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
  t_.send_any(src, CompletionMsg{seq, s}.encode(), Transport::Channel::kEngine);
}

bool RankServer::decode_task(int src, Reader& r, Job* j) {
  TaskMsg m;
  if (Status s = m.decode(r); !s.ok()) {
    reply(src, m.seq, s);
    return false;
  }
  j->src = src;
  j->seq = m.seq;
  j->callable = m.callable;
  j->tensors = std::move(m.tensors);
  j->tags = std::move(m.tags);
  j->scalars = std::move(m.scalars);
  return true;
}

void RankServer::on_task(int src, Reader& r) {
  Job j;
  if (!decode_task(src, r, &j)) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back(std::move(j));
    queued_.fetch_add(1, std::memory_order_release);
  }
  node::bell_ring(*t_.doorbell(Transport::Channel::kExecutor));
}

bool RankServer::take_direct(Job* j, int probes) {
  std::vector<char> buf;
  int from = -1;
  while (t_.take(MPI_ANY_SOURCE, Transport::Channel::kExecutor, &buf, &from, probes)) {
    Reader r(buf.data(), buf.size());
    Msg type;
    if (r.header(&type) && type == Msg::kTask && decode_task(from, r, j)) return true;
  }
  return false;
}

bool RankServer::next_job(Job* j) {
  std::lock_guard<std::mutex> lk(mu_);
  if (queue_.empty()) return false;
  *j = std::move(queue_.front());
  queue_.pop_front();
  queued_.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

bool RankServer::spin_for_task(Job* j) {
  if (cfg_.spin_ns == 0) return false;
  const uint64_t until = mono_ns() + cfg_.spin_ns;
  // A ring of this rank's progress thread (a PUT or FETCH for it to serve)
  // ends the spin: the thread may share this one's core (mpirun binds a rank
  // to one), and a PUT right after a task waited for the spin to end.
  const std::atomic<uint32_t>& progress = t_.doorbell(Transport::Channel::kProgress)->epoch;
  const uint32_t seen = progress.load(std::memory_order_acquire);
  for (uint32_t i = 0;; ++i) {
    if (queued_.load(std::memory_order_acquire) > 0 || stop_.load(std::memory_order_acquire) ||
        progress.load(std::memory_order_acquire) != seen)
      return false;
    if (take_direct(j, 1)) return true;
    if ((i & 15) == 15 && mono_ns() >= until) return false;
    Waiter::spin_pause(i);
  }
}

void RankServer::on_control(int src, Reader& r) {
  ControlMsg m;
  Status st = m.decode(r);
  BufferEntry e;
  if (st.ok()) st = serve_control(m, &e);
  t_.send(src, ControlReplyMsg{m.seq, st, e}.encode());
}

Status RankServer::serve_control(const ControlMsg& m, BufferEntry* e) {
  if (m.op == ControlOp::kAlloc) {
    auto got = own_.alloc(m.a0);
    if (got.ok()) {
      *e = *got;
      Expected<char*> p = mover_.local(RemoteTensor{t_.rank(), e->id, e->generation, 0, e->bytes});
      if (p.ok()) std::memset(*p, 0, e->bytes);
    }
    return got.status();
  }
  if (m.op == ControlOp::kFree) return own_.free(static_cast<uint32_t>(m.a0), static_cast<uint32_t>(m.a1));
  return invalid_argument("CONTROL op " + std::to_string(static_cast<uint32_t>(m.op)) + " is unknown");
}

void RankServer::loop() {
  node::ShmBell& bell = *t_.doorbell(Transport::Channel::kExecutor);
  Job j;
  bool direct = false, spin = false;
  auto ready = [&] {
    direct = take_direct(&j, 2);
    return direct || queued_.load(std::memory_order_acquire) > 0 || stop_.load(std::memory_order_acquire);
  };
  while (true) {
    // A direct TASK is run by this thread as it takes it: no queue, no ring.
    // After another rank's task it probes for cfg_.spin_ns (rank 0's next
    // task usually follows within microseconds), then parks on this rank's
    // executor doorbell: rung by rank 0 after a direct TASK, by on_task()
    // and by stop().
    direct = spin && spin_for_task(&j);
    if (!direct)
      (void)node::bell_wait(
          bell, ready, [] { return Status::Ok(); }, Deadline::after_ms(1000), "an L4 task", 1'000'000'000ull, 0);
    if (stop_.load(std::memory_order_acquire)) return;
    if (!direct && !next_job(&j)) {
      spin = false;  // woken by nothing (a park slice ended): idle, no spin
      continue;
    }
    reply(j.src, j.seq, execute(j));
    // Rank 0's own tasks come from a thread of this process, which may
    // share this one's core (mpirun binds a rank to one): no spin after them.
    spin = j.src != t_.rank();
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
    const uint64_t at = align_up(used, 64);
    if (at > cfg_.staging_bytes || d->nbytes > cfg_.staging_bytes - at)
      return resource_exhausted(arg + ": " + std::to_string(d->nbytes) + " B from rank " + std::to_string(d->owner) +
                                " do not fit in the staging area (NetConfig::staging_bytes=" +
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
