"""Comm domains and collectives from Python (taskring.comm): allocate_domain in upstream's spelling,
the collectives against numpy, and every refused request. Each case runs in a fresh interpreter
(NodeWorker.init() forks)."""

import subprocess
import textwrap

import fresh_interpreter

PRELUDE = textwrap.dedent("""
    import warnings
    import numpy as np
    import pytest
    import taskring
    from taskring import CommBufferSpec
    warnings.simplefilter("ignore", RuntimeWarning)   # the generic-BLAS advice, if any
    RNG = np.random.default_rng(17)

    def spec(nbytes, name="scratch"):
        return CommBufferSpec(name, "float32", nbytes // 4, nbytes)

    def one_collective(node, workers, window, submit, name="d"):
        def orch(o):
            with o.allocate_domain(name=name, workers=workers, window_size=window, buffers=[spec(window)]) as d:
                submit(o, d)
        return node.run(orch)
""")


def run_case(body: str, timeout: int = 180) -> subprocess.CompletedProcess:
    return fresh_interpreter.run_case(PRELUDE, body, timeout)


def test_allreduce_matches_numpy_for_every_algorithm_on_2_and_3_ranks():
    run_case("""
        with taskring.NodeWorker(chips=3) as node:
            comm = node.register(taskring.Callable.comm())
            node.init()
            for ranks in (2, 3):
                workers = list(range(ranks))[::-1]        # rank 0 on the last chip: ranks follow `workers`
                for n in (1, 1001, 70001):
                    window = taskring.collective_scratch_bytes("allreduce", n, np.float32, ranks, algo="ring")
                    for algo in ("one_phase", "ring", "direct", "auto"):
                        ins = [node.shared_array(n) for _ in range(ranks)]
                        outs = [node.shared_array(n) for _ in range(ranks)]
                        for a in ins:
                            a[:] = RNG.standard_normal(n, dtype=np.float32)
                        counts = one_collective(node, workers, window,
                                                lambda o, d: o.allreduce(comm, d, ins, outs, algo=algo))
                        assert counts["completed"] == 1 and counts["failed"] == 0, counts
                        exact = ins[0].copy()
                        for a in ins[1:]:
                            exact += a                    # FP32, ranks 0..n-1 in order
                        for r, out in enumerate(outs):
                            what = f"{ranks} ranks, n={n}, {algo}, rank {r}"
                            assert (out == outs[0]).all(), what      # every rank holds the same sum
                            if algo == "ring":            # summed in ring order
                                np.testing.assert_allclose(out, exact, rtol=1e-5, atol=1e-5, err_msg=what)
                            else:
                                assert (out == exact).all(), what
    """)


def test_bf16_allreduce_and_the_other_collectives_on_4_ranks():
    run_case("""
        R = 4
        with taskring.NodeWorker(chips=R) as node:
            comm = node.register(taskring.Callable.comm())
            node.init()
            workers = list(range(R))

            for n in (513, 5001):                         # auto: one-phase, then direct
                ins = [node.shared_array(n, taskring.BFLOAT16) for _ in range(R)]
                outs = [node.shared_array(n, taskring.BFLOAT16) for _ in range(R)]
                for a in ins:
                    a[:] = taskring.bf16_from_float32(RNG.standard_normal(n, dtype=np.float32))
                window = taskring.collective_scratch_bytes("allreduce", n, taskring.BFLOAT16, R)
                one_collective(node, workers, window,
                               lambda o, d: o.allreduce(comm, d, ins, outs, dtype=taskring.BFLOAT16))
                exact = taskring.float32_from_bf16(ins[0])
                for a in ins[1:]:
                    exact += taskring.float32_from_bf16(a)    # FP32, ranks 0..n-1 in order (docs/kernels.md §5)
                for out in outs:
                    assert (out == taskring.bf16_from_float32(exact)).all(), n   # then rounded once to BF16

            m = 37                                        # allgather, any dtype
            ins = [node.shared_array(m, np.int32) for _ in range(R)]
            outs = [node.shared_array(R * m, np.int32) for _ in range(R)]
            for r, a in enumerate(ins):
                a[:] = np.arange(m) + 1000 * r
            window = taskring.collective_scratch_bytes("allgather", m, np.int32, R)
            one_collective(node, workers, window, lambda o, d: o.allgather(comm, d, ins, outs))
            for out in outs:
                assert (out == np.concatenate(ins)).all()

            ins = [node.shared_array(R * m) for _ in range(R)]   # reduce_scatter
            outs = [node.shared_array(m) for _ in range(R)]
            for a in ins:
                a[:] = RNG.integers(-50, 50, R * m)
            window = taskring.collective_scratch_bytes("reduce_scatter", R * m, np.float32, R)
            one_collective(node, workers, window, lambda o, d: o.reduce_scatter(comm, d, ins, outs))
            total = sum(ins)
            for i, out in enumerate(outs):
                assert (out == total[i * m:(i + 1) * m]).all(), i

            bufs = [node.shared_array(m, np.uint8) for _ in range(R)]   # broadcast from rank 2
            for r, b in enumerate(bufs):
                b[:] = r
            bufs[2][:] = np.arange(m, dtype=np.uint8) + 7
            window = taskring.collective_scratch_bytes("broadcast", m, np.uint8, R)
            one_collective(node, workers, window, lambda o, d: o.broadcast(comm, d, bufs, root=2))
            for b in bufs:
                assert (b == np.arange(m) + 7).all()

            ins = [node.shared_array(R * m, np.int32) for _ in range(R)]   # all_to_all
            outs = [node.shared_array(R * m, np.int32) for _ in range(R)]
            for q, a in enumerate(ins):
                a[:] = np.arange(R * m) + 100000 * q
            window = taskring.collective_scratch_bytes("all_to_all", R * m, np.int32, R)
            one_collective(node, workers, window, lambda o, d: o.all_to_all(comm, d, ins, outs))
            for i, out in enumerate(outs):
                for q in range(R):
                    assert (out[q * m:(q + 1) * m] == ins[q][i * m:(i + 1) * m]).all(), (i, q)
    """)


def test_the_domain_handle_has_upstreams_shape_and_release_semantics():
    run_case("""
        with taskring.NodeWorker(chips=3) as node:
            comm = node.register(taskring.Callable.comm())
            node.init()
            ins = [node.shared_array(16) for _ in range(2)]
            outs = [node.shared_array(16) for _ in range(2)]
            seen = {}
            def orch(o):
                bufs = [CommBufferSpec("a", "uint8", 100, 100), CommBufferSpec("b", "float32", 16, 64)]
                tp = o.allocate_domain(name="tp", workers=[2, 0], window_size=5000, buffers=bufs)
                assert tp.workers == (2, 0) and tp.size == 2 and tp.name == "tp" and tp.window_size == 8192
                ctx = tp[2]
                assert isinstance(ctx, taskring.ChipDomainContext) and ctx is tp.contexts[2]
                assert (ctx.name, ctx.domain_rank, ctx.domain_size) == ("tp", 0, 2)
                assert tp[0].domain_rank == 1
                for c in (tp[0], tp[2]):
                    assert c.device_ctx != 0 and c.actual_window_size == 8192
                    assert c.buffer_ptrs == {"a": c.local_window_base, "b": c.local_window_base + 128}
                with pytest.raises(taskring.NotFoundError, match="chip 1 is not a member"):
                    tp[1]
                with pytest.raises(LookupError):
                    tp[7]
                assert "live" in repr(tp) and not tp.released
                o.allreduce(comm, tp, ins, outs, scratch="b")     # before the release: runs
                o.release_domain(tp)
                tp.release()                                      # idempotent
                assert tp.released and "released" in repr(tp)
                with pytest.raises(taskring.FailedPreconditionError, match="released"):
                    tp[2]
                with pytest.raises(RuntimeError):                 # upstream raises RuntimeError here
                    tp[0]
                with pytest.raises(taskring.FailedPreconditionError, match="was released"):
                    o.allreduce(comm, tp, ins, outs, scratch="b")
                with o.allocate_domain(name="ep", workers=[0, 1, 2], window_size=4096) as ep:
                    assert [ep[c].domain_rank for c in (0, 1, 2)] == [0, 1, 2] and ep[1].buffer_ptrs == {}
                assert ep.released
                seen["o"] = o
                assert not tp.freed and not ep.freed          # upstream: never True inside the run
                seen["handles"] = (tp, ep)
            for a in ins:
                a[:] = 1.5
            counts = node.run(orch)
            assert counts == {"submitted": 1, "completed": 1, "failed": 0, "skipped": 0}, counts
            assert all((out == 3.0).all() for out in outs)
            assert all(h.freed for h in seen["handles"]) and "freed" in repr(seen["handles"][0])
            with pytest.raises(taskring.FailedPreconditionError, match="has returned"):
                seen["o"].allocate_domain(name="late", workers=[0], window_size=4096)
    """)


def test_a_handles_contexts_read_after_its_run_are_those_its_run_saw():
    # The contexts are built on first use (comm.py); the domain they come from stays readable after
    # the run's fence swept it, so a handle first indexed then says what its run saw.
    run_case("""
        with taskring.NodeWorker(chips=2) as node:
            comm = node.register(taskring.Callable.comm())
            node.init()
            spec = [CommBufferSpec("scratch", "float32", 16, 256), CommBufferSpec("x", "uint8", 8, 8)]
            kept = {}
            def orch(o):
                a = o.allocate_domain(name="a", workers=[1, 0], window_size=4096, buffers=spec)
                b = o.allocate_domain(name="b", workers=[1, 0], window_size=4096, buffers=spec)
                kept["in_run"] = {c: b[c] for c in b.workers}   # read while the run is live
                kept["a"], kept["b"] = a, b
            node.run(orch)
            a, b = kept["a"], kept["b"]
            assert a.freed and b.freed
            assert b.contexts == kept["in_run"]
            for h in (a, b):
                assert [h[c].domain_rank for c in (1, 0)] == [0, 1] and h[0].name == h.name
                for c in (0, 1):
                    ctx = h[c]
                    assert ctx.device_ctx != 0 and ctx.domain_size == 2 and ctx.actual_window_size == 4096
                    assert ctx.buffer_ptrs == {"scratch": ctx.local_window_base, "x": ctx.local_window_base + 256}
            assert a[0].local_window_base != b[0].local_window_base   # two live domains of one run
    """)


def test_bad_requests_are_refused_by_name_and_lose_nothing():
    run_case("""
        with taskring.NodeWorker(chips=2, sub_workers=1) as node:
            comm = node.register(taskring.Callable.comm())
            sub = node.register(lambda tensors, scalars: None, name="noop")
            node.init()
            n = 64
            ins = [node.shared_array(n) for _ in range(2)]
            outs = [node.shared_array(n) for _ in range(2)]
            for a in ins:
                a[:] = 2.0
            window = taskring.collective_scratch_bytes("allreduce", n, np.float32, 2, algo="ring")
            def orch(o):
                E = taskring
                refused = [
                    (E.OutOfRangeError, "chip 5 is not a chip of this node", lambda: o.allocate_domain(name="x", workers=[0, 5], window_size=4096)),
                    (E.InvalidArgumentError, "chip 0 is listed twice",
                     lambda: o.allocate_domain(name="x", workers=[0, 0], window_size=4096)),
                    (E.InvalidArgumentError, "0 members", lambda: o.allocate_domain(name="x", workers=[], window_size=4096)),
                    (E.InvalidArgumentError, "1..31 bytes", lambda: o.allocate_domain(name="", workers=[0], window_size=4096)),
                    (E.InvalidArgumentError, "1..31 bytes",
                     lambda: o.allocate_domain(name="n" * 32, workers=[0], window_size=4096)),
                    (E.InvalidArgumentError, "window_size", lambda: o.allocate_domain(name="x", workers=[0], window_size=-1)),
                    (E.InvalidArgumentError, "workers\\\\[1\\\\]", lambda: o.allocate_domain(name="x", workers=[0, "1"], window_size=4096)),
                    (E.InvalidArgumentError, "the buffers need 4288 B", lambda: o.allocate_domain(
                        name="x", workers=[0, 1], window_size=4096, buffers=[spec(4000, "a"), spec(200, "b")])),
                    (E.InvalidArgumentError, "buffer 'a' is listed twice", lambda: o.allocate_domain(
                        name="x", workers=[0, 1], window_size=4096, buffers=[spec(64, "a"), spec(64, "a")])),
                    (E.InvalidArgumentError, "buffer 'a' has 0 bytes", lambda: o.allocate_domain(
                        name="x", workers=[0, 1], window_size=4096, buffers=[spec(0, "a")])),
                    (E.InvalidArgumentError, "not a CommBufferSpec", lambda: o.allocate_domain(
                        name="x", workers=[0, 1], window_size=4096, buffers=[("a", 64)])),
                    (E.UnimplementedError, "load_from_host", lambda: o.allocate_domain(
                        name="x", workers=[0, 1], window_size=4096,
                        buffers=[CommBufferSpec("a", "float32", 16, 64, load_from_host=True)])),
                ]
                for cls, match, call in refused:
                    with pytest.raises(cls, match=match):
                        call()
                d = o.allocate_domain(name="x", workers=[0, 1], window_size=window, buffers=[spec(window)])
                # The scratch buffer runs to the window's end: 64 B here, the ring needs 1 KiB.
                small = o.allocate_domain(name="small", workers=[0, 1], window_size=4096,
                                          buffers=[spec(4000, "pad"), spec(64)])
                bad_submits = [
                    (E.InvalidArgumentError, "scratch", lambda: o.allreduce(comm, small, ins, outs, algo="ring")),
                    (E.NotFoundError, "nope", lambda: o.allreduce(comm, d, ins, outs, scratch="nope")),
                    (E.InvalidArgumentError, "algo 'tree'", lambda: o.allreduce(comm, d, ins, outs, algo="tree")),
                    (E.InvalidArgumentError, "1 per-rank entries", lambda: o.allreduce(comm, d, ins[:1], outs)),
                    (E.InvalidArgumentError, "one array or ChildBuffer per rank", lambda: o.allreduce(comm, d, ins[0], outs)),
                    (E.InvalidArgumentError, "SUB function", lambda: o.allreduce(sub, d, ins, outs)),
                    (E.NotFoundError, "handle 99", lambda: o.allreduce(99, d, ins, outs)),
                    (E.InvalidArgumentError, "CommDomainHandle", lambda: o.allreduce(comm, "x", ins, outs)),
                    (E.OutOfRangeError, "root 2", lambda: o.broadcast(comm, d, outs, root=2)),
                    (E.InvalidArgumentError, "root", lambda: o.broadcast(comm, d, outs, root=-1)),
                ]
                for cls, match, call in bad_submits:
                    with pytest.raises(cls, match=match):
                        call()
                o.allreduce(comm, d, ins, outs, algo="ring")      # nothing was lost: the good one runs
            counts = node.run(orch)
            assert counts["completed"] == 1 and counts["failed"] == 0, counts
            assert all((out == 4.0).all() for out in outs)
            # An array outside the shared heap reaches the node's submit, which fails the run (as every
            # refused L3 submit does, docs/node.md); the worker goes on.
            other = np.zeros(n, np.float32)
            with pytest.raises(taskring.InvalidArgumentError, match="argument 0 .*not in the node's shared heap"):
                one_collective(node, [0, 1], window, lambda o, d: o.allreduce(comm, d, [ins[0], other], outs))
            for out in outs:
                out[:] = 0
            counts = one_collective(node, [0, 1], window, lambda o, d: o.allreduce(comm, d, ins, outs))
            assert counts["completed"] == 1 and all((out == 4.0).all() for out in outs)
            with pytest.raises(taskring.InvalidArgumentError, match="collective"):
                taskring.collective_scratch_bytes("scan", 4, np.float32, 2)
            with pytest.raises(taskring.InvalidArgumentError, match="elems"):
                taskring.collective_scratch_bytes("allreduce", 0, np.float32, 2)
    """)


def test_a_rank_whose_kernel_fails_fails_the_run_naming_its_chip_and_the_next_run_succeeds():
    run_case("""
        R = 3
        with taskring.NodeWorker(chips=R) as node:
            comm = node.register(taskring.Callable.comm())
            node.init()
            n = 256
            ins = [node.shared_array(n) for _ in range(R)]
            outs = [node.shared_array(n) for _ in range(R)]
            bad = list(outs)
            bad[1] = node.shared_array(n, np.int32)       # rank 1's kernel refuses an INT32 output
            for a in ins:
                a[:] = 1.0
            window = taskring.collective_scratch_bytes("allreduce", n, np.float32, R)
            with pytest.raises(taskring.TaskringError, match="chip 1") as e:
                one_collective(node, list(range(R)), window, lambda o, d: o.allreduce(comm, d, ins, bad))
            counts = one_collective(node, list(range(R)), window, lambda o, d: o.allreduce(comm, d, ins, outs))
            assert counts["completed"] == 1, counts
            assert all((out == 3.0).all() for out in outs)
    """)


def test_a_stalled_member_fails_the_allocation_at_comm_timeout_ms_naming_it():
    run_case("""
        import os, signal, threading, time
        with pytest.raises(taskring.InvalidArgumentError, match="domain_cache"):
            taskring.NodeWorker(chips=1, domain_cache=65).init()
        with taskring.NodeWorker(chips=3, comm_timeout_ms=300) as node:
            comm = node.register(taskring.Callable.comm())
            node.init()
            stalled = node.pids()[2]
            def orch(o):
                os.kill(stalled, signal.SIGSTOP)          # chip 2 stops answering, then resumes late
                threading.Timer(0.6, os.kill, (stalled, signal.SIGCONT)).start()
                t0 = time.monotonic()
                with pytest.raises(taskring.DeadlineExceededError, match="comm domain 'late'.*missing ranks 2"):
                    o.allocate_domain(name="late", workers=[0, 1, 2], window_size=4096)
                assert time.monotonic() - t0 < 20          # bounded by the 300 ms barrier, not the 30 s default
            node.run(orch)
            ins = [node.shared_array(8) for _ in range(3)]
            outs = [node.shared_array(8) for _ in range(3)]
            for a in ins:
                a[:] = 1
            one_collective(node, [0, 1, 2], 4096, lambda o, d: o.allreduce(comm, d, ins, outs))
            assert all((out == 3).all() for out in outs)   # the node goes on
    """)


def test_collectives_over_chip_buffers_keep_the_data_on_the_chips():
    run_case("""
        R, n = 3, 1001
        with taskring.NodeWorker(chips=R) as node:
            comm = node.register(taskring.Callable.comm())
            node.init()
            host = [node.shared_array(n) for _ in range(R)]
            back = [node.shared_array(n) for _ in range(R)]
            for a in host:
                a[:] = RNG.standard_normal(n, dtype=np.float32)
            bufs = {}
            def upload(o):
                for c in range(R):
                    bufs[c] = (o.alloc_child_tensor(c, [n], np.float32), o.alloc_child_tensor(c, [n], np.float32))
                    o.copy_to(bufs[c][0], host[c])
            node.run(upload)
            window = taskring.collective_scratch_bytes("allreduce", n, np.float32, R)
            workers = [2, 0, 1]                               # rank i on chip workers[i]
            def orch(o):
                with o.allocate_domain(name="dev", workers=workers, window_size=window,
                                       buffers=[spec(window)]) as d:
                    ins = [bufs[c][0] for c in workers]
                    outs = [bufs[c][1] for c in workers]
                    with pytest.raises(taskring.InvalidArgumentError,
                                       match="inputs\\[1\\]: a buffer of chip 2, but the task runs on chip 0"):
                        o.allreduce(comm, d, [ins[0], ins[0], ins[2]], outs)
                    with pytest.raises(taskring.InvalidArgumentError, match="outputs\\[0\\]: expected a shared array"):
                        o.allreduce(comm, d, ins, ["x", outs[1], outs[2]])
                    o.allreduce(comm, d, ins, outs, algo="one_phase")
                for c in range(R):
                    o.copy_from(back[c], bufs[c][1])           # waits for the allreduce
            node.run(orch)
            exact = host[workers[0]].copy()
            for c in workers[1:]:
                exact += host[c]                              # FP32 in rank order
            for c in range(R):
                assert (back[c] == exact).all(), c
    """)
