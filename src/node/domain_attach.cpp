// DomainRegistry, step 2: attach. Every member chip maps a new domain's
// object at once (they meet at a barrier inside the attach), and release
// undoes it.
#include "domain_registry.hpp"

namespace taskring::node {

namespace cm = kernels::comm;

std::function<void()> domain_abort_hook(std::shared_ptr<DomainObject> obj, int nranks) {
  return [obj = std::move(obj), nranks] {
    obj->header()->abort.store(obj->abort_code(), std::memory_order_release);
    cm::ring(obj->header()->bell);
    for (int r = 0; r < nranks; ++r) cm::ring(obj->sync(r)->bell);
  };
}

// Every member chip (domain rank p.ranks[i] on p.chips[i]) attaches to p.obj.
Expected<std::shared_ptr<CommDomain>> DomainRegistry::attach_all(RunState* run, const std::string& api, Placed p,
                                                                 std::span<const DomainBufferSpec> buffers, Join join) {
  const size_t n = p.chips.size();
  // Every member attaches at once: they meet at a barrier inside.
  std::vector<bool> posted(n, false);
  std::vector<Expected<uint64_t>> got(n, Expected<uint64_t>(uint64_t{0}));
  const std::function<void()> abort_domain = domain_abort_hook(p.obj, p.layout.nranks);
  for (size_t r = 0; r < n; ++r) {
    ControlRequest req;
    req.op = ControlOp::kAttachDomain;
    req.args[0] = p.id;
    req.args[1] = static_cast<uint64_t>(p.ranks[r]);
    req.args[2] = p.layout.total;
    req.args[3] = cfg_.comm_timeout_ms;
    req.fd = p.obj->member_fd(p.ranks[r]);
    Status s = e_.chip_endpoint(p.chips[r]).control_post(req);
    if (!s.ok()) {
      got[r] = s;
      abort_domain();  // the others must not wait for this one
    } else {
      posted[r] = true;
    }
  }
  const Deadline deadline = Deadline::after_ms(cfg_.comm_timeout_ms + e_.control_timeout_ms());
  for (size_t r = 0; r < n; ++r)
    if (posted[r]) got[r] = e_.chip_endpoint(p.chips[r]).control_wait(deadline);
  // The most telling error: a member's own failure (a deadline names the
  // missing ranks) before the aborts it caused.
  Status err;
  for (size_t r = 0; r < n; ++r) {
    if (got[r].ok()) continue;
    if (err.ok() || (err.code() == StatusCode::kAborted && got[r].status().code() != StatusCode::kAborted))
      err = got[r].status().with_context("rank " + std::to_string(p.ranks[r]) + " (chip " + std::to_string(p.chips[r]) +
                                         ")");
  }
  if (!err.ok()) {
    for (size_t r = 0; r < n; ++r)
      if (got[r].ok()) (void)release_member(p.chips[r], p.id);
    return err.with_context(api);
  }
  for (size_t r = 0; r < n; ++r) p.bases.push_back(*got[r]);
  return publish(run, std::move(p), buffers, join == Join::kAttach);
}

// Every member unmaps domain `id`; the first failure, naming the domain.
Status DomainRegistry::release_all(std::span<const int> chips, uint64_t id, const std::string& name) {
  Status first;
  for (int c : chips) {
    Status s = release_member(c, id);
    if (first.ok() && !s.ok()) first = s.with_context("comm domain '" + name + "'");
  }
  return first;
}

Status DomainRegistry::release_member(int chip, uint64_t id) {
  ControlRequest req;
  req.op = ControlOp::kReleaseDomain;
  req.args[0] = id;
  return e_.chip_endpoint(chip).control(req, Deadline::after_ms(e_.control_timeout_ms())).status();
}

}  // namespace taskring::node
