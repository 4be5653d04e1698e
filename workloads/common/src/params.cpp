#include "taskring/workloads/params.hpp"

#include <cassert>
#include <charconv>

namespace taskring::workloads {

ParamSet& ParamSet::add(std::string name, int64_t value, int64_t min, int64_t max, std::string help) {
  assert(find(name) == nullptr && min <= value && value <= max);
  params_.push_back(Param{std::move(name), value, min, max, std::move(help)});
  return *this;
}

const Param* ParamSet::find(std::string_view name) const {
  for (const Param& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

int64_t ParamSet::get(std::string_view name) const {
  const Param* p = find(name);
  assert(p != nullptr);
  return p ? p->value : 0;
}

Status ParamSet::set(std::string_view name, int64_t value) {
  Param* p = const_cast<Param*>(find(name));
  if (p == nullptr) {
    std::string known;
    for (const Param& q : params_) known += (known.empty() ? "" : ", ") + q.name;
    return not_found("unknown parameter '" + std::string(name) + "' (known: " + (known.empty() ? "none" : known) + ")");
  }
  if (value < p->min || value > p->max)
    return out_of_range(p->name + "=" + std::to_string(value) + ": expected an integer in [" + std::to_string(p->min) +
                        ", " + std::to_string(p->max) + "]");
  p->value = value;
  return Status::Ok();
}

Status ParamSet::set_from_string(std::string_view name, std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return invalid_argument(std::string(name) + "='" + std::string(text) + "': not a base-10 integer");
  return set(name, v);
}

std::string ParamSet::describe() const {
  std::string s;
  for (const Param& p : params_) s += (s.empty() ? "" : " ") + p.name + "=" + std::to_string(p.value);
  return s;
}

}  // namespace taskring::workloads
