#include "submission_arena.hpp"
#include "taskring/base/align.hpp"

namespace taskring::graph {

uint8_t* SubmissionArena::try_place(uint64_t bytes) {
  if (capacity_ == 0 || pinned_failed_) return nullptr;
  if (pinned_ == nullptr) {
    auto p = device_->alloc_pinned(capacity_);
    if (!p.ok()) {
      pinned_failed_ = true;
      return nullptr;
    }
    pinned_ = static_cast<uint8_t*>(*p);
  }
  uint64_t at = align_up(used_, 64);
  if (at + bytes > capacity_) return nullptr;
  used_ = at + bytes;
  return pinned_ + at;
}

Status SubmissionArena::upload(uint64_t* calls, uint64_t* bytes) {
  if (used_ == 0) return Status::Ok();
  if (blob_bytes_ < used_) {
    if (blob_ != 0) (void)device_->free(blob_);
    blob_ = 0;
    blob_bytes_ = 0;
    uint64_t want = (used_ + 65535) & ~uint64_t{65535};  // grows by the used prefix, 64 KiB steps
    auto d = device_->malloc(want, 64, "graph submission blob");
    if (!d.ok()) return d.status().with_context("graph submission arena: device blob");
    blob_ = *d;
    blob_bytes_ = want;
  }
  TASKRING_RETURN_IF_ERROR(device_->copy_to_device(blob_, pinned_, used_));
  ++*calls;
  *bytes += used_;
  return Status::Ok();
}

void SubmissionArena::release() {
  if (device_ == nullptr) return;
  if (blob_ != 0) (void)device_->free(blob_);
  blob_ = 0;
  blob_bytes_ = 0;
  if (pinned_ != nullptr) (void)device_->free_pinned(pinned_);
  pinned_ = nullptr;
  used_ = 0;
}

}  // namespace taskring::graph
