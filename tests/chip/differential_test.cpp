// Differential test: random programs run on the tmr runtime (threaded, and
// inline: TASKRING_RUN_INLINE) and on a plain sequential interpreter over
// host memory; the final bytes of every external buffer must be equal.
//
// A program is a stream of scope begins/ends (AUTO and MANUAL, nested) and
// tasks (kernel, dummy, alloc_tensors) over a few external buffers (of 4-,
// 2- and 1-byte element types, so that byte ranges meet at odd offsets) and
// the OUTPUT tensors earlier tasks created. Every task argument is a random
// view (window at a random offset, stepped slice, transpose, flatten, dtype
// reinterpretation at the same element size) with a random tag and
// manual_dep bit. Some programs open with a burst of more than 32 writers of
// one-row windows of one buffer (live at once in the TensorMap, some starting
// before the windows later readers take). The generator knows which orderings the
// runtime provides by itself (TensorMap for tracked arguments in AUTO scopes,
// creator edges outside MANUAL scopes) and adds an explicit dependency for
// every conflicting pair it cannot rely on, so every generated program has
// sequential semantics. The kernel writes a checksum of what it read (see
// checksum_kernel.hpp), so a missed or misordered dependency changes bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <vector>

#include "checksum_kernel.hpp"
#include "pto_orchestration_api.h"
#include "taskring/chip/chip_worker.hpp"
#include "test_scale.hpp"

namespace {

using taskring::testing::checksum_apply;

constexpr bool kSanitized = taskring::testing::kSanitizedBuild;

// ---------------------------------------------------------------- program

struct ViewOp {
  enum Kind { kWindow, kSlice, kTranspose, kFlatten, kRetype } kind;
  uint32_t a[4] = {};
};

struct ArgSpec {
  TensorArgType tag = TensorArgType::INPUT;
  int src = -1;  // external buffer index, or kOutputBase + output id
  std::vector<ViewOp> ops;
  bool manual_dep = false;
  // OUTPUT only.
  uint32_t oshape[2] = {1, 1};
  uint32_t ondims = 1;
  DataType odtype = DataType::FLOAT32;
  bool oinit = false;
  uint32_t oinit_bits = 0;
  bool omanual = false;
  int out_id = -1;
};

enum class TaskKind { kKernel, kDummy, kAlloc };

struct TaskSpec {
  TaskKind kind = TaskKind::kKernel;
  MixedKernels kernels;
  uint32_t slots = 0;  // active kernel slots (bit 0 AIC, 1 AIV0, 2 AIV1)
  int16_t block_num = 1;
  std::vector<ArgSpec> args;
  std::vector<int> deps;  // earlier task indices
  std::vector<DepFlags> dep_flags;
  uint64_t scalars[5] = {};
};

struct Op {
  enum Kind { kBegin, kEnd, kTask } kind;
  PTO2ScopeMode mode = PTO2ScopeMode::AUTO;
  int task = -1;
};

struct BufSpec {
  uint32_t rows = 1, cols = 1;
  DataType dtype = DataType::FLOAT32;
  bool constant = false;
  std::vector<uint32_t> init;
};

constexpr int kOutputBase = 1000;

struct Program {
  uint64_t seed = 0;
  std::vector<BufSpec> bufs;
  std::vector<TaskSpec> tasks;
  std::vector<Op> ops;
  int outputs = 0;
  bool has_manual = false, has_spmd = false, has_mix = false;
  bool has_narrow = false;  // a buffer of 1- or 2-byte elements
  int burst = 0;            // writers of the opening burst (0: none)
};

DataType retype_partner(DataType d) {
  switch (d) {
    case DataType::FLOAT32: return DataType::INT32;
    case DataType::INT32: return DataType::FLOAT32;
    case DataType::INT16: return DataType::FLOAT16;
    case DataType::FLOAT16: return DataType::INT16;
    case DataType::INT8: return DataType::UINT8;
    default: return DataType::INT8;
  }
}

// Applies view ops; an op the view cannot take is skipped (the generator and
// both executions apply the same ops to tensors of the same geometry).
ChipTensor apply_view(ChipTensor t, const std::vector<ViewOp>& ops, bool manual_dep) {
  for (const ViewOp& op : ops) {
    switch (op.kind) {
      case ViewOp::kWindow: {
        if (t.ndims != 2) break;
        uint32_t shp[2] = {std::min(op.a[0], t.shapes[0]), std::min(op.a[1], t.shapes[1])};
        uint32_t off[2] = {op.a[2] % (t.shapes[0] - shp[0] + 1), op.a[3] % (t.shapes[1] - shp[1] + 1)};
        auto v = t.try_view(std::span<const uint32_t>(shp, 2), std::span<const uint32_t>(off, 2));
        if (v.ok()) t = *v;
        break;
      }
      case ViewOp::kSlice: {
        uint32_t dim = op.a[0] % t.ndims;
        uint32_t n = t.shapes[dim];
        if (n == 0) break;
        uint32_t start = op.a[1] % n;
        uint32_t end = start + 1 + op.a[2] % (n - start);
        auto v = t.try_slice(dim, start, end, 1 + op.a[3] % 3);
        if (v.ok()) t = *v;
        break;
      }
      case ViewOp::kTranspose:
        if (t.ndims == 2) t = *t.try_transpose(0, 1);
        break;
      case ViewOp::kFlatten: {
        uint32_t n = static_cast<uint32_t>(t.numel());
        auto v = t.try_reshape(std::span<const uint32_t>(&n, 1));
        if (v.ok()) t = *v;
        break;
      }
      case ViewOp::kRetype:  // same element size: the view's bytes do not change
        t.dtype = retype_partner(t.dtype);
        break;
    }
  }
  t.manual_dep = manual_dep;
  return t;
}

// ---------------------------------------------------------------- generator

struct Access {
  int buf;                      // program-wide buffer identity
  std::vector<uint64_t> elems;  // sorted element offsets
  bool writer;
  bool tracked;  // inserted into / looked up in the TensorMap
};

bool intersects(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) return true;
    if (a[i] < b[j])
      ++i;
    else
      ++j;
  }
  return false;
}

std::vector<uint64_t> elements_of(const ChipTensor& t) {
  std::vector<uint64_t> e;
  taskring::testing::for_each_offset(t, [&](uint64_t, uint64_t off) { e.push_back(off); });
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end()), e.end());
  return e;
}

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) { p_.seed = seed; }

  Program make() {
    int nbufs = 1 + pick(4);
    const bool burst = coin(0.2);
    for (int b = 0; b < nbufs + (burst ? 1 : 0); ++b) {
      BufSpec s;
      s.rows = b == nbufs ? 8 : 1 + pick(6);  // the burst's buffer: 8 rows of 16
      s.cols = b == nbufs ? 16 : 1 + pick(8);
      static constexpr DataType kTypes[] = {DataType::FLOAT32, DataType::INT32, DataType::INT16,
                                            DataType::FLOAT16, DataType::INT8,  DataType::UINT8};
      s.dtype = kTypes[pick(6)];
      p_.has_narrow |= taskring::element_size(s.dtype) < 4;
      s.constant = b < nbufs && nbufs > 1 && coin(0.25);
      s.init.resize(s.rows * s.cols);  // one uint32 per element: narrow types use the first bytes
      for (auto& v : s.init) v = static_cast<uint32_t>(rng_());
      p_.bufs.push_back(s);
      uint32_t shp[2] = {s.rows, s.cols};
      shapes_.push_back(*taskring::try_make_tensor(0x10000, uint64_t{s.rows} * s.cols * taskring::element_size(s.dtype),
                                                   std::span<const uint32_t>(shp, 2), s.dtype));
      creator_.push_back(-1);
      live_.push_back(true);
      manual_base_.push_back(false);
    }
    if (burst) {
      // More than 32 writers of one buffer live at once in the outer AUTO
      // scope (the TensorMap indexes them by start byte): two-element windows
      // of one row at distinct starts, so that none covers (and retires)
      // another, overlapping their neighbours (WAW). All come after a writer
      // of the whole buffer, so that on the inline workers, which orchestrate
      // before they execute, they are still pending when the readers are
      // submitted: a missed edge lets a reader run first. The readers are
      // one-row windows, most starting inside a writer's window.
      std::vector<ArgSpec> whole = {ArgSpec{}};
      whole[0].tag = TensorArgType::INOUT;
      whole[0].src = nbufs;
      make_task(false, &scope_outputs_root_, &whole);
      p_.burst = 33 + static_cast<int>(pick(12));
      std::vector<uint32_t> starts(8 * 15);  // row * 15 + column, columns 0..14
      for (uint32_t i = 0; i < starts.size(); ++i) starts[i] = i;
      std::shuffle(starts.begin(), starts.end(), rng_);
      for (int i = 0; i < p_.burst + 6; ++i) {
        ArgSpec a;
        const bool reader = i >= p_.burst;
        a.tag = reader ? TensorArgType::INPUT : coin(0.5) ? TensorArgType::OUTPUT_EXISTING : TensorArgType::INOUT;
        a.src = nbufs;
        const uint32_t width = reader ? 1 + pick(4) : 2;
        const uint32_t at = reader ? pick(8 * 15) : starts[static_cast<size_t>(i)];
        a.ops = {ViewOp{ViewOp::kWindow, {1, width, at / 15, std::min(at % 15, 16 - width)}}};
        std::vector<ArgSpec> forced = {a};
        make_task(false, &scope_outputs_root_, &forced);
      }
    }
    int ntasks = 3 + pick(26);
    std::vector<PTO2ScopeMode> stack;  // open scopes beyond the outer one
    std::vector<std::vector<int>> scope_outputs(1);
    scope_outputs[0] = std::move(scope_outputs_root_);
    int made = 0;
    while (made < ntasks) {
      double r = uniform();
      if (r < 0.12 && stack.size() < 5) {
        bool in_manual = !stack.empty() && stack.back() == PTO2ScopeMode::MANUAL;
        PTO2ScopeMode m = in_manual || coin(0.3) ? PTO2ScopeMode::MANUAL : PTO2ScopeMode::AUTO;
        p_.has_manual |= m == PTO2ScopeMode::MANUAL;
        stack.push_back(m);
        scope_outputs.emplace_back();
        p_.ops.push_back(Op{Op::kBegin, m, -1});
        continue;
      }
      if (r < 0.20 && !stack.empty()) {
        close_scope(&stack, &scope_outputs);
        continue;
      }
      bool manual = !stack.empty() && stack.back() == PTO2ScopeMode::MANUAL;
      make_task(manual, &scope_outputs.back());
      ++made;
    }
    while (!stack.empty()) close_scope(&stack, &scope_outputs);
    return std::move(p_);
  }

 private:
  uint32_t pick(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  bool coin(double p) { return uniform() < p; }
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }

  void close_scope(std::vector<PTO2ScopeMode>* stack, std::vector<std::vector<int>>* outs) {
    // Outputs of tasks of this scope may be reclaimed once it closes.
    for (int id : outs->back()) live_[static_cast<size_t>(id)] = false;
    outs->pop_back();
    stack->pop_back();
    p_.ops.push_back(Op{Op::kEnd, PTO2ScopeMode::AUTO, -1});
  }

  std::vector<ViewOp> random_view() {
    std::vector<ViewOp> ops;
    int n = pick(4) == 0 ? 0 : 1 + pick(2);
    for (int i = 0; i < n; ++i) {
      ViewOp op;
      uint32_t k = pick(10);
      op.kind = k < 4   ? ViewOp::kWindow
                : k < 7 ? ViewOp::kSlice
                : k < 8 ? ViewOp::kTranspose
                : k < 9 ? ViewOp::kFlatten
                        : ViewOp::kRetype;
      for (auto& a : op.a) a = 1 + pick(6);
      if (op.kind == ViewOp::kSlice) op.a[1] = pick(6);
      if (op.kind == ViewOp::kWindow) {
        op.a[2] = pick(6);
        op.a[3] = pick(6);
        if (coin(0.05)) op.a[0] = 0;  // zero-size window
      }
      ops.push_back(op);
    }
    return ops;
  }

  // Sources a non-OUTPUT argument may name: external buffers and live outputs.
  int random_source(bool writer) {
    std::vector<int> c;
    for (size_t b = 0; b < live_.size(); ++b) {
      if (!live_[b]) continue;
      if (writer && b < p_.bufs.size() && p_.bufs[b].constant) continue;
      c.push_back(static_cast<int>(b));
    }
    if (c.empty()) return -1;
    return c[pick(static_cast<uint32_t>(c.size()))];
  }

  // A random task, or with `forced` a kernel task on exactly those
  // (non-OUTPUT, external buffer) arguments.
  void make_task(bool manual_scope, std::vector<int>* scope_outs, const std::vector<ArgSpec>* forced = nullptr) {
    TaskSpec t;
    uint32_t k = pick(10);
    t.kind = forced ? TaskKind::kKernel : k < 8 ? TaskKind::kKernel : k < 9 ? TaskKind::kDummy : TaskKind::kAlloc;
    int self = static_cast<int>(p_.tasks.size());
    std::vector<Access> acc;
    std::vector<int> creators;  // creator tasks of the arguments
    int nargs = forced ? static_cast<int>(forced->size()) : t.kind == TaskKind::kAlloc ? 1 + pick(2) : 1 + pick(4);
    for (int i = 0; i < nargs; ++i) {
      ArgSpec a;
      if (forced) {
        a = (*forced)[static_cast<size_t>(i)];
        const bool writer = a.tag == TensorArgType::INOUT || a.tag == TensorArgType::OUTPUT_EXISTING;
        ChipTensor v = apply_view(shapes_[static_cast<size_t>(a.src)], a.ops, a.manual_dep);
        acc.push_back(Access{a.src, elements_of(v), writer, !manual_scope && !a.manual_dep});
        t.args.push_back(a);
        continue;
      }
      if (t.kind == TaskKind::kAlloc) {
        a.tag = TensorArgType::OUTPUT;
      } else {
        uint32_t r = pick(100);
        a.tag = r < 30   ? TensorArgType::INPUT
                : r < 55 ? TensorArgType::INOUT
                : r < 70 ? TensorArgType::OUTPUT_EXISTING
                : r < 80 ? TensorArgType::NO_DEP
                         : TensorArgType::OUTPUT;
        if (t.kind == TaskKind::kDummy && a.tag == TensorArgType::OUTPUT) a.tag = TensorArgType::INPUT;
      }
      if (a.tag == TensorArgType::OUTPUT) {
        a.ondims = coin(0.5) ? 1 : 2;
        a.oshape[0] = 1 + pick(a.ondims == 1 ? 16 : 5);
        a.oshape[1] = 1 + pick(6);
        a.odtype = coin(0.5) ? DataType::FLOAT32 : DataType::INT32;
        a.oinit = t.kind == TaskKind::kAlloc || coin(0.4);
        a.oinit_bits = static_cast<uint32_t>(rng_());
        a.omanual = coin(0.2);
        a.out_id = p_.outputs++;
        ChipTensor shape =
            *taskring::try_make_tensor(0x10000, uint64_t{a.oshape[0]} * (a.ondims == 2 ? a.oshape[1] : 1) * 4,
                                       std::span<const uint32_t>(a.oshape, a.ondims), a.odtype, a.omanual);
        size_t idx = p_.bufs.size() + static_cast<size_t>(a.out_id);
        if (shapes_.size() <= idx) {
          shapes_.resize(idx + 1);
          creator_.resize(idx + 1, -1);
          live_.resize(idx + 1, false);
          manual_base_.resize(idx + 1, false);
        }
        shapes_[idx] = shape;
        creator_[idx] = self;
        manual_base_[idx] = a.omanual;
        t.args.push_back(a);
        continue;
      }
      bool writer = a.tag == TensorArgType::INOUT || a.tag == TensorArgType::OUTPUT_EXISTING;
      int src = random_source(writer);
      if (src < 0) {
        a.tag = TensorArgType::INPUT;
        writer = false;
        src = random_source(false);
      }
      a.src = src < static_cast<int>(p_.bufs.size()) ? src : kOutputBase + (src - static_cast<int>(p_.bufs.size()));
      a.ops = random_view();
      a.manual_dep = manual_base_[static_cast<size_t>(src)] ? coin(0.8) : coin(0.12);
      ChipTensor v = apply_view(shapes_[static_cast<size_t>(src)], a.ops, a.manual_dep);
      bool tracked = !manual_scope && !a.manual_dep && a.tag != TensorArgType::NO_DEP;
      acc.push_back(Access{src, elements_of(v), writer, tracked});
      if (creator_[static_cast<size_t>(src)] >= 0) creators.push_back(creator_[static_cast<size_t>(src)]);
      t.args.push_back(a);
    }

    // Kernel shape: AIC / AIV / MIX, SPMD block count.
    if (t.kind == TaskKind::kKernel) {
      uint32_t r = pick(10);
      if (r < 2) {
        t.slots = 1 | (coin(0.5) ? 2u : 0u) | 4u;
        if (coin(0.3)) t.slots = 1 | 2;
      } else {
        t.slots = r < 5 ? 1u : 2u;
      }
      t.kernels.aic_kernel_id = (t.slots & 1) ? 0 : INVALID_KERNEL_ID;
      t.kernels.aiv0_kernel_id = (t.slots & 2) ? 1 : INVALID_KERNEL_ID;
      t.kernels.aiv1_kernel_id = (t.slots & 4) ? 2 : INVALID_KERNEL_ID;
      t.block_num = coin(0.3) ? static_cast<int16_t>(2 + pick(3)) : 1;
    }
    // Written views and read views of this task.
    uint32_t wmask = 0, rmask = 0, omask = 0;
    std::vector<Access> own;  // this task's element sets by argument (OUTPUTs too)
    size_t ai = 0;
    for (size_t i = 0; i < t.args.size(); ++i) {
      const ArgSpec& a = t.args[i];
      if (a.tag == TensorArgType::OUTPUT) {
        size_t idx = p_.bufs.size() + static_cast<size_t>(a.out_id);
        own.push_back(Access{static_cast<int>(idx), elements_of(shapes_[idx]), true, false});
        wmask |= 1u << i;
        if (a.oinit) omask |= 1u << i;
        continue;
      }
      const Access& x = acc[ai++];
      own.push_back(x);
      if (a.tag == TensorArgType::INPUT || a.tag == TensorArgType::NO_DEP) rmask |= 1u << i;
      if (a.tag == TensorArgType::INOUT) {
        wmask |= 1u << i;
        omask |= 1u << i;
      }
      if (a.tag == TensorArgType::OUTPUT_EXISTING) wmask |= 1u << i;
    }
    if (t.kind == TaskKind::kKernel) {
      // Several participants write in parallel: their written views must be
      // disjoint from each other and from what the task reads.
      int nparts = t.block_num * __builtin_popcount(t.slots);
      if (nparts > 1) {
        bool ok = true;
        for (size_t i = 0; i < own.size() && ok; ++i) {
          for (size_t j = i + 1; j < own.size() && ok; ++j) {
            bool wi = (wmask >> i) & 1, wj = (wmask >> j) & 1;
            if (!(wi || wj) || own[i].buf != own[j].buf) continue;
            if (intersects(own[i].elems, own[j].elems)) ok = false;
          }
        }
        if (!ok) {
          t.block_num = 1;
          t.slots = (t.slots & 1) ? 1u : 2u;
          t.kernels = MixedKernels{};
          if (t.slots & 1)
            t.kernels.aic_kernel_id = 0;
          else
            t.kernels.aiv0_kernel_id = 1;
        }
      }
      p_.has_spmd |= t.block_num > 1;
      p_.has_mix |= __builtin_popcount(t.slots) > 1;
      t.scalars[0] = static_cast<uint32_t>(rng_());
      t.scalars[1] = wmask;
      t.scalars[2] = rmask;
      t.scalars[3] = omask;
      t.scalars[4] = t.slots;
    }

    // Orderings: every earlier task with a conflicting access must be
    // ordered before this one, by the runtime's own rules or explicitly.
    std::vector<Access> mine;  // accesses for conflict purposes (no OUTPUTs)
    for (size_t i = 0, j = 0; i < t.args.size(); ++i) {
      if (t.args[i].tag == TensorArgType::OUTPUT) continue;
      mine.push_back(acc[j++]);
    }
    for (int a = 0; a < self; ++a) {
      const std::vector<Access>& theirs = history_[static_cast<size_t>(a)];
      bool conflict = false, guaranteed = false;
      for (const Access& x : theirs) {
        for (const Access& y : mine) {
          if (x.buf != y.buf || !(x.writer || y.writer) || !intersects(x.elems, y.elems)) continue;
          conflict = true;
          if (x.tracked && y.tracked) guaranteed = true;
        }
      }
      if (!manual_scope && std::find(creators.begin(), creators.end(), a) != creators.end()) guaranteed = true;
      bool extra = coin(0.02);
      if ((conflict && !guaranteed) || extra) {
        t.deps.push_back(a);
        t.dep_flags.push_back(coin(0.5) ? DEP_WAIT : static_cast<DepFlags>(DEP_WAIT | DEP_RETAIN));
      }
    }

    // What later tasks see of this one. OUTPUT writes are reached through
    // creator edges, which the conflict check above handles; conflicts on
    // them are recorded untracked so that MANUAL consumers get explicit deps.
    std::vector<Access> hist;
    for (size_t i = 0, j = 0; i < t.args.size(); ++i) {
      const ArgSpec& a = t.args[i];
      if (a.tag == TensorArgType::OUTPUT) {
        if (t.kind == TaskKind::kKernel) {
          size_t idx = p_.bufs.size() + static_cast<size_t>(a.out_id);
          hist.push_back(Access{static_cast<int>(idx), elements_of(shapes_[idx]), true, false});
        }
        continue;
      }
      Access x = acc[j++];
      // NO_DEP arguments are read-only; a dummy "writes" nothing but its
      // writer tags still order it (harmless extra edges).
      hist.push_back(x);
    }
    history_.push_back(std::move(hist));
    for (const ArgSpec& a : t.args) {
      if (a.tag != TensorArgType::OUTPUT) continue;
      size_t idx = p_.bufs.size() + static_cast<size_t>(a.out_id);
      live_[idx] = true;
      scope_outs->push_back(static_cast<int>(idx));
    }
    p_.ops.push_back(Op{Op::kTask, PTO2ScopeMode::AUTO, self});
    p_.tasks.push_back(std::move(t));
  }

  std::mt19937_64 rng_;
  Program p_;
  // Per buffer identity (externals first, then outputs by id).
  std::vector<ChipTensor> shapes_;
  std::vector<int> creator_;
  std::vector<bool> live_;
  std::vector<bool> manual_base_;
  std::vector<std::vector<Access>> history_;
  std::vector<int> scope_outputs_root_;  // outputs of the burst (none: it writes externals only)
};

// Accesses above use buffer identities 0..nbufs-1 for externals and
// nbufs+out_id for outputs (both from `random_source` and OUTPUT records).

// ---------------------------------------------------------------- interpreter

std::vector<std::vector<uint32_t>> interpret(const Program& p) {
  std::vector<std::vector<uint32_t>> mem;
  mem.reserve(p.bufs.size());
  std::vector<ChipTensor> base;
  for (const BufSpec& b : p.bufs) {
    mem.push_back(b.init);
    uint32_t shp[2] = {b.rows, b.cols};
    base.push_back(*taskring::try_make_tensor(reinterpret_cast<uintptr_t>(mem.back().data()),
                                              uint64_t{b.rows} * b.cols * taskring::element_size(b.dtype),
                                              std::span<const uint32_t>(shp, 2), b.dtype));
  }
  std::vector<std::vector<uint32_t>> outs(static_cast<size_t>(p.outputs));
  std::vector<ChipTensor> out_base(static_cast<size_t>(p.outputs));
  // mem's inner buffers never move once pushed (outer vector reserved below).
  for (const Op& op : p.ops) {
    if (op.kind != Op::kTask) continue;
    const TaskSpec& t = p.tasks[static_cast<size_t>(op.task)];
    std::vector<ChipTensor> views(t.args.size());
    for (size_t i = 0; i < t.args.size(); ++i) {
      const ArgSpec& a = t.args[i];
      if (a.tag == TensorArgType::OUTPUT) {
        auto& o = outs[static_cast<size_t>(a.out_id)];
        uint64_t n = uint64_t{a.oshape[0]} * (a.ondims == 2 ? a.oshape[1] : 1);
        o.assign(n, a.oinit ? a.oinit_bits : 0xDEADBEEFu);
        out_base[static_cast<size_t>(a.out_id)] =
            *taskring::try_make_tensor(reinterpret_cast<uintptr_t>(o.data()), n * 4,
                                       std::span<const uint32_t>(a.oshape, a.ondims), a.odtype, a.omanual);
        views[i] = out_base[static_cast<size_t>(a.out_id)];
        continue;
      }
      const ChipTensor& b =
          a.src >= kOutputBase ? out_base[static_cast<size_t>(a.src - kOutputBase)] : base[static_cast<size_t>(a.src)];
      views[i] = apply_view(b, a.ops, a.manual_dep);
    }
    if (t.kind != TaskKind::kKernel) continue;
    std::vector<const ChipTensor*> ptrs;
    for (auto& v : views) ptrs.push_back(&v);
    int nparts = t.block_num * __builtin_popcount(t.slots);
    for (int part = 0; part < nparts; ++part) {
      checksum_apply(ptrs.data(), static_cast<int>(ptrs.size()), t.scalars, part, nparts);
    }
  }
  return mem;
}

// ---------------------------------------------------------------- orchestration

const Program* g_program = nullptr;
std::string* g_orch_error = nullptr;

extern "C" void diff_entry(const ChipTaskArgs& args) {
  const Program& p = *g_program;
  std::vector<ChipTensor> outs(static_cast<size_t>(p.outputs));
  std::vector<PTO2TaskId> ids(p.tasks.size());
  for (const Op& op : p.ops) {
    if (op.kind == Op::kBegin) {
      rt_scope_begin(op.mode);
      continue;
    }
    if (op.kind == Op::kEnd) {
      rt_scope_end();
      continue;
    }
    const TaskSpec& t = p.tasks[static_cast<size_t>(op.task)];
    ChipTensor views[taskring::CORE_MAX_TENSOR_ARGS];
    TensorCreateInfo infos[taskring::CORE_MAX_TENSOR_ARGS];
    CoreTaskArgs ta;
    for (size_t i = 0; i < t.args.size(); ++i) {
      const ArgSpec& a = t.args[i];
      if (a.tag == TensorArgType::OUTPUT) {
        infos[i] = TensorCreateInfo(a.oshape, a.ondims, a.odtype, a.omanual);
        if (a.oinit) infos[i].set_initial_value(a.oinit_bits);
        ta.add_output(infos[i]);
        continue;
      }
      const ChipTensor& b = a.src >= kOutputBase ? outs[static_cast<size_t>(a.src - kOutputBase)] : *args.tensor(a.src);
      views[i] = apply_view(b, a.ops, a.manual_dep);
      ta.add_tensor(views[i], a.tag);
    }
    if (t.kind == TaskKind::kKernel) {
      for (uint64_t s : t.scalars) ta.add_scalar(s);
      ta.launch_spec.set_block_num(t.block_num);
    }
    std::vector<PTO2TaskId> dep_ids;
    for (int d : t.deps) dep_ids.push_back(ids[static_cast<size_t>(d)]);
    if (!dep_ids.empty())
      ta.set_dependencies_with_kinds(dep_ids.data(), t.dep_flags.data(), static_cast<int>(dep_ids.size()));
    TaskOutputTensors r = t.kind == TaskKind::kKernel  ? rt_submit_task(t.kernels, ta)
                          : t.kind == TaskKind::kDummy ? rt_submit_dummy_task(ta)
                                                       : alloc_tensors(ta);
    if (!r.task_id().is_valid()) {
      if (g_orch_error->empty()) *g_orch_error = "task " + std::to_string(op.task) + " got no task id";
      return;
    }
    ids[static_cast<size_t>(op.task)] = r.task_id();
    int oi = 0;
    for (const ArgSpec& a : t.args) {
      if (a.tag != TensorArgType::OUTPUT) continue;
      outs[static_cast<size_t>(a.out_id)] = r.get_ref(oi++);
    }
  }
}

std::string describe(const Program& p) {
  std::ostringstream os;
  os << "program seed " << p.seed << ": " << p.bufs.size() << " buffers, " << p.tasks.size() << " tasks, ops:";
  for (const Op& op : p.ops) {
    if (op.kind == Op::kBegin)
      os << (op.mode == PTO2ScopeMode::MANUAL ? " {M" : " {A");
    else if (op.kind == Op::kEnd)
      os << " }";
    else {
      const TaskSpec& t = p.tasks[static_cast<size_t>(op.task)];
      os << " t" << op.task << (t.kind == TaskKind::kDummy ? "d" : t.kind == TaskKind::kAlloc ? "a" : "") << "[";
      for (const ArgSpec& a : t.args) {
        static const char kTag[] = "IOXEN";  // INPUT OUTPUT INOUT OUTPUT_EXISTING NO_DEP
        os << kTag[static_cast<int>(a.tag)] << (a.tag == TensorArgType::OUTPUT ? a.out_id : a.src)
           << (a.manual_dep ? "m" : "") << "/" << a.ops.size() << " ";
      }
      os << "b" << t.block_num << " s" << t.slots << " deps";
      for (int d : t.deps) os << " " << d;
      os << "]";
    }
  }
  return os.str();
}

struct WorkerSetup {
  int threads, clusters;
  bool run_inline = false;
  std::unique_ptr<taskring::ChipWorker> worker;
  int callable = -1;
};

std::vector<WorkerSetup> make_workers() {
  std::vector<WorkerSetup> ws;
  for (auto [threads, clusters] : {std::pair{1, 1}, {1, 4}, {2, 2}, {2, 8}, {4, 3}, {4, 8}}) {
    ws.push_back(WorkerSetup{threads, clusters, false, nullptr, -1});
  }
  for (int clusters : {1, 8}) ws.push_back(WorkerSetup{1, clusters, true, nullptr, -1});
  for (auto& w : ws) {
    taskring::ChipWorkerConfig cfg;
    cfg.env = taskring::map_env(
        {{"TASKRING_SIM_THREADS", std::to_string(w.threads)},
         {"TASKRING_SIM_CLUSTERS", std::to_string(w.clusters)},
         {"TASKRING_RUN_TIMEOUT_MS", "20000"},
         {"TASKRING_STALL_TIMEOUT_MS", "10000"},
         {"TASKRING_RUN_INLINE", w.run_inline ? "1" : "0"},
         // chip_test_sanitize_tags runs this corpus under the tag checker.
         {"TASKRING_SANITIZE", std::getenv("TASKRING_SANITIZE") ? std::getenv("TASKRING_SANITIZE") : "off"}});
    auto cw = taskring::ChipWorker::create(cfg);
    EXPECT_TRUE(cw.ok()) << cw.status().to_string();
    if (!cw.ok()) return {};
    w.worker = std::move(cw).value();
    taskring::ChipCallable c;
    c.name = "differential";
    c.entry = diff_entry;
    c.kernels = {{0, taskring::testing::test_checksum, "", "checksum_aic"},
                 {1, taskring::testing::test_checksum, "", "checksum_aiv0"},
                 {2, taskring::testing::test_checksum, "", "checksum_aiv1"}};
    auto id = w.worker->register_callable(c);
    EXPECT_TRUE(id.ok()) << id.status().to_string();
    w.callable = id.ok() ? *id : -1;
  }
  return ws;
}

struct Coverage {
  int manual = 0, spmd = 0, mix = 0, tasks = 0, narrow = 0, burst = 0;
};

// Runs programs [first, first + count) on the workers round-robin.
void run_programs(uint64_t first, int count) {
  auto workers = make_workers();
  ASSERT_EQ(workers.size(), 8u);
  Coverage cov;
  for (int n = 0; n < count; ++n) {
    uint64_t seed = first + static_cast<uint64_t>(n);
    Program p = Generator(seed * 0x9E3779B97F4A7C15ull + 7).make();
    p.seed = seed;
    cov.manual += p.has_manual;
    cov.spmd += p.has_spmd;
    cov.mix += p.has_mix;
    cov.tasks += static_cast<int>(p.tasks.size());
    cov.narrow += p.has_narrow;
    cov.burst += p.burst > 32;
    auto expected = interpret(p);

    WorkerSetup& w = workers[static_cast<size_t>(n) % workers.size()];
    std::vector<std::vector<uint32_t>> mem;
    mem.reserve(p.bufs.size());
    std::vector<ChipTensor> tensors(p.bufs.size());
    ChipTaskArgs args;
    for (size_t b = 0; b < p.bufs.size(); ++b) {
      mem.push_back(p.bufs[b].init);
      uint32_t shp[2] = {p.bufs[b].rows, p.bufs[b].cols};
      tensors[b] = make_tensor_external(mem.back().data(), shp, 2, p.bufs[b].dtype);
      if (p.bufs[b].constant)
        args.add_input(tensors[b]);
      else
        args.add_inout(tensors[b]);
    }
    std::string orch_error;
    g_program = &p;
    g_orch_error = &orch_error;
    auto report = w.worker->run(w.callable, args);
    ASSERT_TRUE(report.ok()) << report.status().to_string() << "\n"
                             << describe(p) << " (threads " << w.threads << ", clusters " << w.clusters
                             << (w.run_inline ? ", inline" : "") << ")";
    ASSERT_TRUE(orch_error.empty()) << orch_error << "\n" << describe(p);
    EXPECT_EQ(report->stats.tasks_submitted, p.tasks.size());
    EXPECT_EQ(report->stats.tasks_completed, p.tasks.size());
    for (size_t b = 0; b < p.bufs.size(); ++b) {
      ASSERT_EQ(mem[b], expected[b]) << "buffer " << b << " differs\n"
                                     << describe(p) << " (threads " << w.threads << ", clusters " << w.clusters
                                     << (w.run_inline ? ", inline" : "") << ")";
    }
  }
  // The generator must actually exercise the features it claims to.
  EXPECT_GT(cov.manual, count / 10);
  EXPECT_GT(cov.spmd, count / 10);
  EXPECT_GT(cov.mix, count / 10);
  EXPECT_GT(cov.narrow, count / 4);
  EXPECT_GT(cov.burst, count / 10);
}

TEST(Differential, RandomProgramsMatchSequentialExecution) { run_programs(1, kSanitized ? 200 : 1200); }

// Seeds disjoint from the test above: a slice on every run; all 30000 with
// TASKRING_SLOW_TESTS=1 (CTest label 'slow': `make test-slow`).
TEST(DifferentialSlow, ManyMoreRandomPrograms) {
  run_programs(100000, taskring::testing::test_scale(1000, 100, 30000));
}

// The interpreter itself: a program whose outcome is known by hand.
TEST(Differential, InterpreterAppliesTasksInOrder) {
  Program p;
  BufSpec b;
  b.rows = 1;
  b.cols = 2;
  b.init = {5, 6};
  p.bufs.push_back(b);
  TaskSpec t;
  t.kind = TaskKind::kKernel;
  t.slots = 2;
  ArgSpec a;
  a.tag = TensorArgType::INOUT;
  a.src = 0;
  t.args.push_back(a);
  t.scalars[0] = 9;
  t.scalars[1] = 1;
  t.scalars[3] = 1;
  t.scalars[4] = 2;
  p.tasks.push_back(t);
  p.ops.push_back(Op{Op::kTask, PTO2ScopeMode::AUTO, 0});
  auto mem = interpret(p);
  using taskring::testing::mix32;
  uint32_t s = mix32(0x1234567u, 9);
  uint32_t e0 = mix32(mix32(mix32(mix32(s, 9), 0), 0), 5);
  uint32_t e1 = mix32(mix32(mix32(mix32(s, 9), 0), 1), 6);
  EXPECT_EQ(mem[0], (std::vector<uint32_t>{e0, e1}));
}

}  // namespace
