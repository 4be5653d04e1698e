// Kernel-side communication over a comm domain's windows (sim backend).
//
// A comm domain (node layer, docs/comm.md) is one shared-memory object that
// every member chip process maps, at an address of its own:
//
//   [ DomainHeader | CommContext x 64 | SyncBlock x ranks | window x ranks ]
//
// Each member gets a CommContext (its `device_ctx`, passed to kernels as a
// scalar) holding this process's address of every rank's window and sync
// block, so a kernel reaches a peer's copy of a window address as
// windows[peer] + (addr - windows[self]). Windows carry data (the domain's
// named buffers); sync blocks carry the runtime's own signals (barrier and
// collective flags) and the rank's doorbell.
//
// Every wait spins briefly (or, when ranks outnumber the CPUs, polls between
// sched_yield calls for at most kYieldPollNs), then parks on the waiting
// rank's doorbell (a process-shared futex) which every notify rings; it ends OK, or with a
// kernel error (TASKRING_KERNEL_ERR_DEADLINE) naming the domain, the rank and
// what it waited for (for barriers: the missing ranks) once the domain's
// timeout passes or the domain is aborted (a member of the run failed).
// Nothing here ever blocks without a deadline.
//
// Functions taking a KernelArgs report through it and return false on
// failure; the kernel must then return.
#pragma once

#include <atomic>
#include <cstdint>

#include "taskring/kernels/kernel_args.hpp"
#include "taskring/kernels/tile_view.hpp"

namespace taskring::kernels::comm {

inline constexpr int kMaxRanks = 64;
inline constexpr uint32_t kContextMagic = 0x54524343u;  // "TRCC"
inline constexpr uint32_t kHeaderMagic = 0x54524448u;   // "TRDH"
inline constexpr size_t kNameBytes = 32;
// Checks of a wait's condition before it parks, when ranks fit the CPUs.
inline constexpr uint32_t kSpinChecks = 1000;
// How long a wait polls between sched_yield calls before it parks, when
// ranks outnumber the CPUs. Yielding hands the core to any rank that can
// run, so unlike a spin it takes nothing from the rank waited for; what it
// saves is the park and the wake-up, and the halt of an idle virtual CPU
// that a remote wake-up must end. Measured on the 8-chip MoE step on two
// vCPUs: 488 -> 380 us median (the phases of a step last 100-250 us).
inline constexpr uint64_t kYieldPollNs = 500'000;

// A process-shared doorbell: waiters park on `epoch` after raising `parked`.
struct alignas(64) CommBell {
  std::atomic<uint32_t> epoch{0};
  std::atomic<uint32_t> parked{0};
};

// DomainHeader::abort at or above this: kAbortMismatch + n, node n's
// domain of this name and sequence is not this one (L4, docs/l4.md).
inline constexpr uint32_t kAbortMismatch = 1u << 30;

// Domain-wide state, written by the parent before the members map it (name,
// sizes) and by the members during allocation (arrivals).
struct alignas(64) DomainHeader {
  uint32_t magic = 0;
  int32_t nranks = 0;
  uint64_t window_size = 0;
  uint64_t id = 0;
  char name[kNameBytes] = {};
  // A domain spanning nodes (L4, docs/l4.md): bit r set when rank r lives on
  // another node (its window is reached through the per-rank request ring,
  // comm_remote.hpp); ring_bytes per local rank (0: a one-node domain).
  uint64_t offnode_mask = 0;
  uint64_t ring_bytes = 0;
  // Non-zero once the run failed: every wait in the domain ends with an
  // error instead of running into its deadline. Set by the parent: 1 when
  // this node's run failed, 2 + n when node (MPI rank) n reported a failure,
  // kAbortMismatch + n when node n allocated another domain under this
  // name and sequence (other members, ranks or window size).
  alignas(64) std::atomic<uint32_t> abort{0};
  // arrived[r] = 1 once rank r zeroed its window and filled its context:
  // the allocation barrier that publishes the windows.
  alignas(64) std::atomic<uint32_t> arrived[kMaxRanks] = {};
  CommBell bell;  // rung on every arrival, on abort and when a barrier completes
  // The kernel barrier (barrier()): one counter of arrivals over the
  // domain's life, and the latest barrier epoch every rank reached. Rank r's
  // e-th barrier is complete once `barrier_arrivals` reaches e·nranks; its
  // last arriver publishes e in `barrier_done` and rings `bell` once, which
  // wakes every parked member (one wake per barrier, not one per hop).
  alignas(64) std::atomic<uint32_t> barrier_arrivals{0};
  alignas(64) std::atomic<uint32_t> barrier_done{0};
};

// One per rank; peers write its flag words, the owner reads them.
struct alignas(64) SyncBlock {
  CommBell bell;
  // flags[src]: the latest collective token rank src posted to this rank
  // (token = sequence * 256 + step; monotonic per src).
  alignas(64) std::atomic<uint32_t> flags[kMaxRanks];
  // What the owner's wait_flags() waits for while it may park: every src in
  // `want_mask` (bit src) at `want_tok` or more. post_flag() rings the owner
  // only when its post completes that set, so a rank waiting on n-1 peers is
  // woken once, not n-1 times. want_mask 0: no flag waiter announced (a post
  // then rings whenever someone is parked).
  alignas(64) std::atomic<uint64_t> want_mask;
  std::atomic<uint32_t> want_tok;
  // The latest barrier epoch this rank reached (read to name missing ranks).
  std::atomic<uint32_t> barrier_reached;
  // barrier[src]: the latest barrier epoch rank src reached, for domains
  // spanning nodes only (the header's arrival counter is one node's memory,
  // so there every rank posts its arrival to every other, off-node ones
  // through the request ring).
  alignas(64) std::atomic<uint32_t> barrier[kMaxRanks];
  // Private to the owner: its barrier epoch and collective sequence, and
  // the scratch layout of its last parity-buffered collective.
  alignas(64) uint32_t barrier_epoch;
  uint32_t coll_seq;
  uint64_t scratch_off, scratch_stride;
  // Private to the owner: the direct allreduces in segments it ran, and
  // whether they run in one segment, as rank 0's last hand-off probe
  // decided (comm_collectives.cpp; every rank keeps the same value).
  uint32_t direct_calls;
  uint32_t direct_whole;
  // Rank 0's only: the verdict of its latest probe, which the other ranks
  // read after rank 0's probe flag.
  alignas(64) std::atomic<uint32_t> direct_verdict;
};

// What a member kernel receives (as a scalar: its address in the member's
// process). Filled by the member itself when it maps the domain.
struct CommContext {
  uint32_t magic;
  int32_t rank;
  int32_t nranks;
  // Checks a wait spins before it parks: 0 when the domain has more ranks
  // than this process may use CPUs (a spinning rank would only take the core
  // the rank it waits for needs), kSpinChecks otherwise.
  uint32_t spin;
  uint32_t reserved;
  // Nanoseconds a wait polls between sched_yield calls before it parks:
  // kYieldPollNs exactly when spin is 0, else 0.
  uint64_t yield_ns;
  uint64_t win_size;
  uint64_t timeout_ns;
  uint64_t header;  // DomainHeader*
  uint64_t windows[kMaxRanks];
  uint64_t sync[kMaxRanks];  // SyncBlock*
  // Domains spanning nodes: bit r set when rank r is on another node; its
  // windows[r] / sync[r] are then a local shadow never written, and put /
  // notify / barrier / post_flag to it go through `ring` (comm_remote.hpp).
  uint64_t offnode;
  uint64_t ring;  // RemoteRing* of this rank, 0 for one-node domains
};

inline bool offnode(const CommContext& c, int peer) { return ((c.offnode >> peer) & 1u) != 0; }

// Byte layout of one domain's object.
// Domains spanning nodes add one request ring per rank after the windows
// (`ring_bytes` each, 0 for one-node domains).
struct DomainLayout {
  int nranks = 0;
  uint64_t window_size = 0;  // per rank, page-rounded
  uint64_t ring_bytes = 0;   // per rank, page-rounded
  uint64_t header_off = 0, contexts_off = 0, sync_off = 0, windows_off = 0, rings_off = 0, total = 0;

  static DomainLayout make(int nranks, uint64_t window_size, uint64_t ring_bytes = 0);
  uint64_t ring(int r) const { return rings_off + static_cast<uint64_t>(r) * ring_bytes; }
  uint64_t context(int r) const { return contexts_off + static_cast<uint64_t>(r) * sizeof(CommContext); }
  uint64_t sync(int r) const { return sync_off + static_cast<uint64_t>(r) * sizeof(SyncBlock); }
  uint64_t window(int r) const { return windows_off + static_cast<uint64_t>(r) * window_size; }
};

// Fills rank `rank`'s context for a mapping of the domain at `base`. The
// spin and yield budgets follow the CPUs this process may run on (sched
// affinity).
void fill_context(CommContext* ctx, char* base, const DomainLayout& layout, int rank, uint64_t timeout_ns);

// Rings a doorbell (cheap when nobody is parked).
void ring(CommBell& bell);

// ---- kernel side -----------------------------------------------------------

// The context passed as scalar `j`, checked (magic, rank in range);
// nullptr after reporting.
const CommContext* context_arg(const KernelArgs& k, int j);

inline SyncBlock& sync_of(const CommContext& c, int r) { return *reinterpret_cast<SyncBlock*>(c.sync[r]); }
inline DomainHeader& header_of(const CommContext& c) { return *reinterpret_cast<DomainHeader*>(c.header); }
inline char* window_of(const CommContext& c, int r) { return reinterpret_cast<char*>(c.windows[r]); }
const char* domain_name(const CommContext& c);

// The peer's copy of `local` (an address in this rank's window); nullptr
// when `local` is not inside it.
void* peer_address(const CommContext& c, int peer, const void* local);

// Checks [off, off + bytes) lies inside a window, reporting otherwise.
bool check_window_range(const KernelArgs& k, const CommContext& c, uint64_t off, uint64_t bytes, const char* what);
bool check_peer(const KernelArgs& k, const CommContext& c, int peer);

// Copies `bytes` from `src` to offset `dst_off` of peer's window.
bool put(const KernelArgs& k, const CommContext& c, int peer, uint64_t dst_off, const void* src, uint64_t bytes);
// Copies `bytes` from offset `src_off` of peer's window to `dst`.
bool get(const KernelArgs& k, const CommContext& c, int peer, void* dst, uint64_t src_off, uint64_t bytes);
// A tile: the rows of `src` (any dtype, any strides) packed row-major at
// `dst_off` of peer's window, in src's dtype.
bool put_tile(const KernelArgs& k, const CommContext& c, int peer, uint64_t dst_off, const tile::View2D& src);
// The reverse: `dst.rows x dst.cols` packed elements at `src_off` of peer's
// window into `dst` (same dtype).
bool get_tile(const KernelArgs& k, const CommContext& c, int peer, const tile::View2D& dst, uint64_t src_off);

enum class NotifyOp : uint32_t { kSet = 0, kAdd = 1 };
enum class Cmp : uint32_t { kEq = 0, kNe = 1, kGt = 2, kGe = 3, kLt = 4, kLe = 5 };

// Atomically sets / adds `value` to the 32-bit signal at `signal_off` (4-byte
// aligned) of peer's window, then rings the peer.
bool notify(const KernelArgs& k, const CommContext& c, int peer, uint64_t signal_off, NotifyOp op, uint32_t value);
// Waits until the signal at `signal_off` of this rank's window compares
// `cmp` to `value`; kernel error on the deadline or an abort.
bool wait_signal(const KernelArgs& k, const CommContext& c, uint64_t signal_off, Cmp cmp, uint32_t value);
// Every rank of the domain: no rank leaves before all arrived. The error
// names the ranks that did not arrive.
bool barrier(const KernelArgs& k, const CommContext& c);

// ---- collective building blocks (sync-block flags) ------------------------

// Starts the next collective on this rank; returns its sequence number
// (the same on every rank, as every rank runs the same collectives in order).
uint32_t begin_collective(const CommContext& c);
// The same for a collective that double-buffers scratch by sequence parity:
// its parity-p slot is [off + p·stride, off + (p+1)·stride) of each window.
// Slots of one layout never overlap, and a rank starts collective k+2 only
// after every rank entered k+1 (so finished reading k). Collectives of
// different layouts (other sizes, other algorithms) on overlapping scratch
// would break that: when this collective's (off, stride) differs from the
// previous one's and their regions overlap, every rank first meets at a
// barrier (all ranks take the same decision: they run the same collectives
// in the same order). Returns 0 after reporting a failed barrier.
uint32_t begin_collective(const KernelArgs& k, const CommContext& c, uint64_t off, uint64_t stride);
inline uint32_t token(uint32_t seq, uint32_t step) { return seq * 256u + step; }
// Posts `tok` to peer (flags[self] of peer's sync block) and rings it if
// this post completes what the peer's wait_flags() waits for.
void post_flag(const CommContext& c, int peer, uint32_t tok);
// Waits until flags[src] is at or past tok (modulo 2^32: a token up to
// 2^31 - 1 ahead counts, so sequence numbers may wrap) for every src in
// `srcs` (nullptr: every other rank); the error names the ranks still missing and `what`. One
// wait_flags per rank at a time (collectives on a rank run in order); a
// second concurrent one still ends, but may only notice its flags at the
// next park slice.
bool wait_flags(const KernelArgs& k, const CommContext& c, const int* srcs, int nsrcs, uint32_t tok, const char* what);

}  // namespace taskring::kernels::comm
