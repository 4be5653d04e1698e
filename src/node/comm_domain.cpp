// CommDomain: the handle an orchestration gets from allocate_domain (what
// its members map, where its named buffers lie). DomainRegistry
// (domain_registry.hpp) allocates, attaches and publishes it.
#include "taskring/node/comm_domain.hpp"

namespace taskring::node {

std::vector<int> CommDomain::chips() const {
  std::vector<int> c;
  for (const DomainMember& m : members_) c.push_back(m.chip);
  return c;
}

Expected<DomainMember> CommDomain::member(int chip) const {
  for (const DomainMember& m : members_)
    if (m.chip == chip) return m;
  std::string list;
  for (const DomainMember& m : members_) list += (list.empty() ? "" : ",") + std::to_string(m.chip);
  return not_found("chip " + std::to_string(chip) + " is not a member of comm domain '" + name_ + "' (members: chips " +
                   list + ")");
}

Expected<uint64_t> CommDomain::buffer_offset(std::string_view name) const {
  for (const auto& [n, off] : buffers_)
    if (n == name) return off;
  return not_found("comm domain '" + name_ + "' has no buffer named '" + std::string(name) + "'");
}

Expected<uint64_t> CommDomain::buffer(int chip, std::string_view name) const {
  TASKRING_ASSIGN_OR_RETURN(const DomainMember m, member(chip));
  TASKRING_ASSIGN_OR_RETURN(const uint64_t off, buffer_offset(name));
  return m.window_base + off;
}

}  // namespace taskring::node
