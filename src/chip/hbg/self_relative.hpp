// SelfRelative<T>: a pointer stored as an int32 byte delta from the field's
// own address, so a block holding both the field and its target keeps every
// link valid after one memcpy (host build -> device upload, no relocation).
// 0 means null; a target out of int32 reach stores 0 and set() says false.
// Not copyable: a copied delta would point somewhere else.
#pragma once

#include <cstdint>

namespace taskring::hbg {

template <typename T>
class SelfRelative {
 public:
  SelfRelative() = default;
  SelfRelative(const SelfRelative&) = delete;
  SelfRelative& operator=(const SelfRelative&) = delete;

  bool set(const T* target) {
    if (target == nullptr) {
      delta_ = 0;
      return true;
    }
    int64_t d = reinterpret_cast<intptr_t>(target) - reinterpret_cast<intptr_t>(this);
    if (d == 0 || d < INT32_MIN || d > INT32_MAX) {
      delta_ = 0;
      return false;
    }
    delta_ = static_cast<int32_t>(d);
    return true;
  }
  T* get() const {
    if (delta_ == 0) return nullptr;
    return reinterpret_cast<T*>(reinterpret_cast<intptr_t>(this) + delta_);
  }
  int32_t delta() const { return delta_; }

 private:
  int32_t delta_ = 0;
};

static_assert(sizeof(SelfRelative<int>) == 4);

}  // namespace taskring::hbg
