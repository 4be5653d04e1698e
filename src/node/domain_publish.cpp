// DomainRegistry, step 3: publish. The CommDomain handle of an attached
// domain, counted live until its run's fence, which releases it or, when the
// domain is cacheable and the run passed, keeps it for reuse.
#include "domain_registry.hpp"
#include "taskring/base/align.hpp"

namespace taskring::node {

namespace {}  // namespace

std::shared_ptr<CommDomain> DomainRegistry::publish(RunState* run, Placed p, std::span<const DomainBufferSpec> buffers,
                                                    bool cacheable) {
  const int nranks = p.layout.nranks;
  auto d = std::make_shared<CommDomain>();
  d->name_ = p.name;
  d->window_size_ = p.layout.window_size;
  d->nranks_ = nranks;
  for (size_t r = 0; r < p.chips.size(); ++r) {
    DomainMember m;
    m.chip = p.chips[r];
    m.rank = p.ranks[r];
    m.size = nranks;
    m.device_ctx = p.bases[r] + p.layout.context(p.ranks[r]);
    m.window_base = p.bases[r] + p.layout.window(p.ranks[r]);
    m.window_size = p.layout.window_size;
    d->members_.push_back(m);
  }
  uint64_t off = 0;
  for (const DomainBufferSpec& b : buffers) {
    d->buffers_.emplace_back(b.name, off);
    off += align_up(b.bytes, 64);
  }
  live_.fetch_add(1, std::memory_order_acq_rel);
  std::function<void()> abort_domain = domain_abort_hook(p.obj, nranks);
  std::weak_ptr<CommDomain> handle = d;
  // A run that failed while we allocated aborts the domain at once.
  e_.add_run_hooks(run, std::move(abort_domain),
                   [this, p = std::move(p), cacheable, handle](const RunFence& fence) -> Status {
                     if (auto h = handle.lock()) h->swept_.store(true, std::memory_order_release);
                     return sweep(fence, p, cacheable);
                   });
  return d;
}

Status DomainRegistry::sweep(const RunFence& fence, const Placed& p, bool cacheable) {
  live_.fetch_sub(1, std::memory_order_acq_rel);
  // A closing worker stops its children next; a member may still be
  // inside a kernel and could not serve the request before its
  // deadline. Their mappings end with them; the parent's goes here.
  if (fence.closing) {
    if (!fence.failed) p.obj->leave();  // no other node waits to reuse it
    return Status::Ok();
  }
  const std::string why = "releasing the run's comm domains";
  // A failed run's members may be gone or stuck: keep nothing of it (the
  // cache is flushed after the fence, at_every_fence). Its abort word tells
  // any other node that would reuse it.
  if (fence.failed) {
    Status s = release_all(p.chips, p.id, p.name);
    return s.ok() ? s : s.with_context(why);
  }
  if (!cacheable || cfg_.cache <= 0) {
    Status s = drop(p);
    return s.ok() ? s : s.with_context(why);
  }
  auto c = std::make_shared<Cached>(p);
  std::shared_ptr<Cached> evicted;
  {
    std::lock_guard<std::mutex> lk(cache_mu_);
    cache_.push_back(std::move(c));
    if (static_cast<int>(cache_.size()) > cfg_.cache) {
      evicted = std::move(cache_.front());
      cache_.pop_front();
    }
  }
  if (!evicted) return Status::Ok();
  Status s = drop(*evicted);
  return s.ok() ? s : s.with_context(why);
}

Status DomainRegistry::drop(const Cached& c) {
  c.obj->leave();
  return release_all(c.chips, c.id, c.obj->header()->name);
}

Status DomainRegistry::flush_cache() {
  std::deque<std::shared_ptr<Cached>> all;
  {
    std::lock_guard<std::mutex> lk(cache_mu_);
    all.swap(cache_);
  }
  Status first;
  for (const auto& c : all) {
    Status s = drop(*c);
    if (first.ok()) first = s;
  }
  return first;
}

Status DomainRegistry::at_every_fence(const RunFence& fence) {
  if (!fence.failed || fence.closing) return Status::Ok();
  Status s = flush_cache();
  return s.ok() ? s : s.with_context("releasing the cached comm domains after the run failed");
}

}  // namespace taskring::node
