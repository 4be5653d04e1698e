"""taskring.NodeWorker (L3 from Python): chips and SUB functions in forked children.

Each case runs in a fresh interpreter: NodeWorker.init() forks, and needs a process with no other
thread (the pytest process may hold ChipWorkers of other tests).
"""

import os
import subprocess
import textwrap

import fresh_interpreter

PRELUDE = textwrap.dedent("""
    import os, signal, sys, threading, time, warnings
    import numpy as np
    import pytest
    import taskring
    warnings.simplefilter("ignore", RuntimeWarning)   # the generic-BLAS advice, if any
    VEC = taskring.Callable.workload("vector")

    def vector_args(node, n=256):
        a, b, f = node.shared_array(n), node.shared_array(n), node.shared_array(n)
        a[:], b[:] = 2, 3
        return a, b, f
""")


def run_case(body: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return fresh_interpreter.run_case(PRELUDE, body, timeout)


def test_chips_and_a_sub_function_ordered_by_their_tags():
    run_case("""
        def scale(tensors, scalars):
            assert len(tensors) == 1 and scalars == [2]
            tensors[0][...] *= scalars[0]
            tensors[0][0] = os.getpid()             # proves it ran in a child, in the shared heap

        with taskring.NodeWorker(chips=2, sub_workers=1) as node:
            vec = node.register(VEC)
            sub = node.register(scale)
            assert node.register(VEC) == vec        # the same Callable, the same handle
            node.init()
            pids = node.pids()
            assert len(pids) == 3 and os.getpid() not in pids
            a, b, _ = vector_args(node)
            f = [node.shared_array(256) for _ in range(2)]
            def orch(o):
                assert (o.chips, o.sub_workers) == (2, 1)
                for chip in range(2):
                    o.submit_next_level(vec, [(a, taskring.INPUT), (b, taskring.INPUT),
                                              (f[chip], taskring.OUTPUT_EXISTING)], worker=chip)
                o.submit_sub(sub, [(f[0], taskring.INOUT), 2])
            counts = node.run(orch)
            assert counts == {"submitted": 3, "completed": 3, "failed": 0, "skipped": 0}, counts
            assert (f[0][1:] == 94).all() and (f[1] == 47).all()   # SUB after chip 0: (47) * 2
            assert int(f[0][0]) == pids[2]
    """)


def test_a_group_runs_one_member_per_chip_and_runs_repeat():
    run_case("""
        with taskring.NodeWorker(chips=2) as node:
            vec = node.register(VEC)
            node.init()
            a, b, _ = vector_args(node, 4096)
            f = [node.shared_array(4096) for _ in range(2)]
            for round_ in range(5):
                for x in f:
                    x[:] = 0
                h = node.submit(lambda o: o.submit_next_level_group(
                    vec, [[(a, taskring.INPUT), (b, taskring.INPUT), (x, taskring.OUTPUT_EXISTING)] for x in f],
                    workers=[0, 1]))
                assert h.wait()["completed"] == 1 and h.done   # a group counts once
                assert all((x == 47).all() for x in f), round_
    """)


def test_a_sub_group_runs_one_member_per_sub_worker():
    run_case("""
        def fill(tensors, scalars):
            tensors[0][...] = scalars[0]

        with taskring.NodeWorker(chips=0, sub_workers=2) as node:
            sub = node.register(fill)
            node.init()
            xs = [node.shared_array(64, np.int64) for _ in range(2)]
            counts = node.run(lambda o: o.submit_sub_group(sub, [[(x, taskring.OUTPUT_EXISTING), 10 + i]
                                                                 for i, x in enumerate(xs)]))
            assert counts["completed"] == 1, counts
            assert (xs[0] == 10).all() and (xs[1] == 11).all()
            with pytest.raises(taskring.InvalidArgumentError, match="3 members but only 2 SUB workers"):
                node.run(lambda o: o.submit_sub_group(sub, [[(x, taskring.INOUT)] for x in xs + xs[:1]]))
    """)


def test_a_sub_function_that_raises_fails_the_run_naming_it_and_the_worker_goes_on():
    run_case("""
        def broken(tensors, scalars):
            raise ValueError("no such expert 7")

        def fill(tensors, scalars):
            tensors[0][...] = scalars[0]

        with taskring.NodeWorker(chips=0, sub_workers=1) as node:
            bad, good = node.register(broken), node.register(fill, name="fill")
            node.init()
            x = node.shared_array(16, np.int32)
            with pytest.raises(taskring.TaskringError) as e:
                node.run(lambda o: o.submit_sub(bad, [(x, taskring.INOUT)]))
            assert "SUB function 'broken' raised ValueError: no such expert 7" in str(e.value), str(e.value)
            node.run(lambda o: o.submit_sub(good, [(x, taskring.OUTPUT_EXISTING), 5]))
            assert (x == 5).all()
    """)


def test_an_orch_function_that_raises_propagates_its_exception_and_cancels_what_did_not_start():
    run_case("""
        class Stop(Exception):
            pass

        def fill(tensors, scalars):
            tensors[0][...] = 1

        with taskring.NodeWorker(chips=0, sub_workers=1) as node:
            sub = node.register(fill)
            node.init()
            x = node.shared_array(8)
            def orch(o):
                o.submit_sub(sub, [(x, taskring.OUTPUT_EXISTING)])
                raise Stop("orchestration gave up")
            with pytest.raises(Stop, match="orchestration gave up"):
                node.run(orch)
            x[:] = 0
            node.run(lambda o: o.submit_sub(sub, [(x, taskring.OUTPUT_EXISTING)]))
            assert (x == 1).all()
    """)


def test_bad_arguments_are_refused_by_name_and_lose_nothing():
    run_case("""
        def noop(tensors, scalars):
            pass

        node = taskring.NodeWorker(chips=1, sub_workers=1)
        vec, sub = node.register(VEC), node.register(noop)
        with pytest.raises(taskring.FailedPreconditionError, match="call init"):
            node.shared_array(4)
        with pytest.raises(taskring.InvalidArgumentError, match="expected a taskring.Callable or a Python callable"):
            node.register(42)
        node.init()
        with pytest.raises(taskring.FailedPreconditionError, match="register every callable before init"):
            node.register(noop)
        with pytest.raises(taskring.InvalidArgumentError, match="shape must be ints"):
            node.shared_array([4, 0])
        with pytest.raises(taskring.InvalidArgumentError, match="no taskring type"):
            node.shared_array(4, np.complex64)
        a, b, f = vector_args(node)
        private = np.zeros(256, np.float32)
        with pytest.raises(taskring.InvalidArgumentError, match="argument 2 .*not in the node's shared heap"):
            node.run(lambda o: o.submit_next_level(vec, [(a, taskring.INPUT), (b, taskring.INPUT),
                                                        (private, taskring.OUTPUT_EXISTING)], worker=0))
        with pytest.raises(taskring.OutOfRangeError, match="chip 3 is not in"):
            node.run(lambda o: o.submit_next_level(vec, [(a, taskring.INPUT)], worker=3))
        with pytest.raises(taskring.NotFoundError, match="handle 9 was not returned"):
            node.run(lambda o: o.submit_sub(9, []))
        with pytest.raises(taskring.InvalidArgumentError, match="is a chip callable; submit it with submit_next_level"):
            node.run(lambda o: o.submit_sub(vec, []))
        # Upstream's signatures: worker is keyword-only, a CallConfig is not supported, args of a SUB optional.
        with pytest.raises(TypeError):
            node.run(lambda o: o.submit_next_level(vec, [(a, taskring.INPUT)], None, 0))
        with pytest.raises(taskring.UnimplementedError, match="CallConfig is not supported"):
            node.run(lambda o: o.submit_next_level(vec, [(a, taskring.INPUT)], object(), worker=0))
        node.run(lambda o: o.submit_sub(sub))
        kept = []
        node.run(lambda o: kept.append(o))
        with pytest.raises(taskring.FailedPreconditionError, match="orch function that has returned"):
            kept[0].submit_sub(sub, [])
        # Nothing above broke the worker.
        node.run(lambda o: o.submit_next_level(vec, [(a, taskring.INPUT), (b, taskring.INPUT),
                                                    (f, taskring.OUTPUT_EXISTING)], worker=0))
        assert (f == 47).all()
        pids = node.pids()
        node.close()
        node.close()                                  # idempotent
        assert (f == 47).all()                        # the heap outlives close()
        for p in pids:                                # every child reaped
            with pytest.raises(ProcessLookupError):
                os.kill(p, 0)
        with pytest.raises(taskring.FailedPreconditionError, match="closed"):
            node.run(lambda o: None)
        with pytest.raises(taskring.InvalidArgumentError, match="chips must be an integer >= 0"):
            taskring.NodeWorker(chips=-1)
    """)


def test_orchestrator_alloc_tensors_are_ordered_by_tags_reclaimed_and_bound_to_their_run():
    run_case("""
        def copy_out(tensors, scalars):                # the first elements of tensor 0 into tensor 1
            tensors[1][...] = tensors[0].reshape(-1)[:tensors[1].size]

        def fill(tensors, scalars):
            tensors[0][...] = scalars[0]

        with taskring.NodeWorker(chips=1, sub_workers=1, heap_ring_bytes=4 << 20) as node:
            vec, sub, fill = node.register(VEC), node.register(copy_out), node.register(fill)
            node.init()
            a, b, f = vector_args(node)
            kept = []
            def orch(o):
                m = o.alloc([16, 8], taskring.BFLOAT16)    # upstream: alloc(shape, dtype)
                assert (m.shape, m.dtype, m.nbytes) == ((16, 8), taskring.BFLOAT16, 256)
                assert isinstance(m, taskring.HeapTensor) and repr(m).startswith("HeapTensor(BF16[16x8"), repr(m)
                t = o.alloc(256, np.float32)
                kept.append(t)
                o.submit_next_level(vec, [(a, taskring.INPUT), (b, taskring.INPUT), (t, taskring.OUTPUT)], worker=0)
                o.submit_sub(sub, [(t, taskring.INPUT), (f, taskring.OUTPUT_EXISTING)])   # after the chip task
            assert node.run(orch)["completed"] == 2
            assert (f == 47).all()
            # The ring is reused: 40 runs of 1 MiB each through a 4 MiB ring.
            for i in range(40):
                f[:] = 0
                def orch(o):
                    big = o.alloc(1 << 18, "float32")
                    o.submit_sub(fill, [(big, taskring.OUTPUT), i])
                    o.submit_sub(sub, [(big, taskring.INPUT), (f, taskring.OUTPUT_EXISTING)])
                node.run(orch)
                assert (f == i).all(), i
            with pytest.raises(taskring.FailedPreconditionError, match="argument 0: .*another run's Orchestrator.alloc"):
                node.run(lambda o: o.submit_sub(sub, [(kept[0], taskring.INPUT), (f, taskring.OUTPUT_EXISTING)]))
            with pytest.raises(taskring.ResourceExhaustedError, match="heap_ring_bytes"):
                node.run(lambda o: o.alloc([5 << 20], np.uint8))
            with pytest.raises(taskring.InvalidArgumentError, match="alloc: shape must be ints"):
                node.run(lambda o: o.alloc([4, 0], np.float32))
            with pytest.raises(taskring.InvalidArgumentError, match="no taskring type"):
                node.run(lambda o: o.alloc([4], np.complex64))
            with pytest.raises(taskring.FailedPreconditionError, match="has returned"):
                node.run(lambda o: kept.append(o))
                kept[-1].alloc([4], np.float32)
            # A ChipWorker's run (L2) takes no heap tensor.
            with taskring.ChipWorker() as w:
                with pytest.raises(taskring.InvalidArgumentError, match="argument 0: .*node tasks only"):
                    w.run(VEC, [(kept[0], taskring.INPUT)])
            node.run(orch)                                 # the worker goes on
            assert (f == 39).all()
    """)


def test_chip_buffers_hold_data_across_runs_and_stay_on_their_chip():
    run_case("""
        def noop(tensors, scalars):
            pass

        with taskring.NodeWorker(chips=2, sub_workers=1) as node:
            vec, sub = node.register(VEC), node.register(noop)
            node.init()
            n = 256
            a, b, f = vector_args(node, n)
            w = {}
            def upload(o):                               # once: "weights" on chip 1
                w["a"] = o.alloc_child_tensor(1, [n], np.float32)   # upstream's spelling
                o.copy_to(w["a"], a)
            node.run(upload)
            wa = w["a"]
            assert (wa.worker_id, wa.shape, wa.dtype, wa.nbytes, wa.freed) == (1, (n,), taskring.FLOAT32, 4 * n, False)
            assert isinstance(wa, taskring.ChildBuffer) and repr(wa) == "ChildBuffer(chip 1, FP32[256], 1024 B)"
            for i in range(3):                           # used by several runs
                b[:] = i
                f[:] = 0
                def orch(o):
                    out = o.alloc_child_tensor(1, [n], np.float32)
                    o.submit_next_level(vec, [(wa, taskring.INPUT), (b, taskring.INPUT), (out, taskring.OUTPUT)],
                                        worker=1)
                    o.copy_from(f, out)                  # waits for the task that writes `out`
                    o.free(out)
                    assert out.freed
                node.run(orch)
                s = 2 + i
                assert (f == (s + 1) * (s + 2) + s).all(), (i, f[:4])
            half = node.shared_array(n // 2)
            def views(o):                                # a view of the second half, and partial copies
                part = o.alloc_child_tensor(1, [n], np.float32)
                o.copy_to(part, a, dst_offset=2 * n, src_offset=0, nbytes=2 * n)    # a[:128] -> part[128:]
                o.copy_to(part, b, nbytes=2 * n)                                   # b[:128] -> part[:128]
                o.submit_next_level(vec, [taskring.Tensor(part, taskring.INPUT, shape=[n // 2], offset=n // 2),
                                          taskring.Tensor(part, taskring.INPUT, shape=[n // 2]),
                                          taskring.Tensor(part, taskring.OUTPUT, shape=[n // 2], offset=n // 2)],
                                    worker=1)
                o.copy_from(half, part, src_offset=2 * n)
                o.free(part)
            node.run(views)
            s = 2 + 2
            assert (half == (s + 1) * (s + 2) + s).all(), half[:4]

            def refused(o):
                E = taskring
                with pytest.raises(E.InvalidArgumentError, match="argument 0: a buffer of chip 1, but the task runs on chip 0"):
                    o.submit_next_level(vec, [(wa, E.INPUT), (b, E.INPUT), (f, E.OUTPUT)], worker=0)
                with pytest.raises(E.InvalidArgumentError, match="argument 0: .*SUB workers take host tensors only"):
                    o.submit_sub(sub, [(wa, E.INPUT)])
                with pytest.raises(E.OutOfRangeError, match="chip 5"):
                    o.alloc_child_tensor(5, [4], np.float32)
                with pytest.raises(E.InvalidArgumentError, match="shape must be ints"):
                    o.alloc_child_tensor(0, [4, 0], np.float32)
                with pytest.raises(E.OutOfRangeError, match="leave the chip buffer's 1024 B"):
                    o.copy_to(wa, node.shared_array(2 * n))
                with pytest.raises(E.OutOfRangeError, match="src_offset 2048 is past"):
                    o.copy_from(f, wa, src_offset=2048)
                with pytest.raises(E.OutOfRangeError, match="leave the host array's 512 B"):
                    o.copy_from(node.shared_array(n // 2), wa)
                with pytest.raises(E.InvalidArgumentError, match="not in the node's shared heap"):
                    o.copy_from(np.zeros(n, np.float32), wa)
                with pytest.raises(E.InvalidArgumentError, match="expected \\(dst: ChildBuffer"):
                    o.copy_to(a, wa)
                with pytest.raises(E.InvalidArgumentError, match="nbytes must be an integer"):
                    o.copy_to(wa, a, nbytes=-1)
                gone = o.alloc_child_tensor(0, [4], np.float32)
                o.free(gone)
                with pytest.raises(E.FailedPreconditionError, match="free: this chip buffer was freed"):
                    o.free(gone)
                with pytest.raises(E.FailedPreconditionError, match="argument 0: this chip buffer was freed"):
                    o.submit_next_level(vec, [(gone, E.INPUT)], worker=0)
                with pytest.raises(E.FailedPreconditionError, match="copy_to: this chip buffer was freed"):
                    o.copy_to(gone, a)
            node.run(refused)
            with taskring.ChipWorker() as cw:            # an L2 run takes no chip buffer of a node
                with pytest.raises(taskring.InvalidArgumentError, match="argument 0: .*node tasks only"):
                    cw.run(VEC, [(wa, taskring.INPUT)])
            b[:] = 0
            node.run(orch)                               # the node goes on, and the weights are still there
            assert (f == 3 * 4 + 2).all()
    """)


def test_init_refuses_a_process_that_runs_another_thread():
    run_case("""
        stop = threading.Event()
        t = threading.Thread(target=stop.wait)
        t.start()
        node = taskring.NodeWorker(chips=1)
        with pytest.raises(taskring.FailedPreconditionError, match="thread"):
            node.init()
        stop.set()
        t.join()
        assert node.closed
    """)


def test_bfloat16_shared_arrays_are_uint16_bit_patterns():
    run_case("""
        with taskring.NodeWorker(chips=0, sub_workers=1) as node:
            node.register(lambda tensors, scalars: None, name="noop")
            node.init()
            x = node.shared_array((3, 5), taskring.BFLOAT16)
            assert x.dtype == np.uint16 and x.shape == (3, 5) and not x.any()
            assert node.shared_array(2, "fp16").dtype == np.float16
    """)


def test_a_worker_never_closed_is_closed_at_exit_and_its_children_reaped():
    r = run_case("""
        node = taskring.NodeWorker(chips=1, sub_workers=1)
        node.register(VEC)
        node.register(lambda tensors, scalars: None, name="noop")
        node.init()
        print("PIDS", *node.pids())
    """)
    pids = [int(p) for p in r.stdout.split("PIDS", 1)[1].split()[:2]]
    # Reaped by the exiting interpreter itself: not even a zombie left for init.
    assert not any(os.path.exists(f"/proc/{p}") for p in pids), pids


# Issue 38, finding 5: Ctrl-C (SIGINT) during NodeWorker.run cancels the run promptly: the node is
# closed at once (every child killed, so a SUB that never returns cannot hold it) and the caller
# gets KeyboardInterrupt. Each case bounds itself: the interrupt must arrive within 15 s of the
# signal, where the SUB would run for 60 s or forever.
INTERRUPT_CASE = """
    def {name}(tensors, scalars):
        {body}

    node = taskring.NodeWorker(chips=0, sub_workers=1)
    sub = node.register({name})
    node.init()
    child = node.pids()[0]
    started = node.shared_array(1)
    def orch(o):
        o.submit_sub(sub, [(started, taskring.INOUT)])
    threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    t0 = time.monotonic()
    try:
        node.run(orch, timeout_ms=60000)
        raise SystemExit("the run ended without the interrupt")
    except KeyboardInterrupt:
        pass
    took = time.monotonic() - t0
    assert took < 15, took
    assert node.closed
    with pytest.raises(taskring.FailedPreconditionError, match="closed"):
        node.run(orch)
    for _ in range(200):                         # the SUB child is gone (killed and reaped)
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise SystemExit(f"SUB child {{child}} still alive")
"""


def test_sigint_cancels_a_run_whose_sub_loops_forever():
    run_case(INTERRUPT_CASE.format(name="spin", body="while True: pass"), timeout=60)


def test_sigint_cancels_a_run_whose_sub_sleeps():
    run_case(INTERRUPT_CASE.format(name="nap", body="time.sleep(60)"), timeout=60)


# Issue 38, finding 6: a nested run is refused at once, and a forked copy of the process cannot use
# the worker (it belongs to the process that initialised it); the owner's node still works.
def test_nested_run_is_refused_at_once():
    run_case("""
        with taskring.NodeWorker(chips=0, sub_workers=1) as node:
            node.register(lambda tensors, scalars: None, name="noop")
            node.init()
            t0 = time.monotonic()
            with pytest.raises(taskring.FailedPreconditionError, match="nest"):
                node.run(lambda o: node.run(lambda o2: None))
            assert time.monotonic() - t0 < 10
            assert node.run(lambda o: None)["failed"] == 0     # still usable
    """, timeout=60)


def test_a_fork_cannot_run_the_owners_worker():
    run_case("""
        with taskring.NodeWorker(chips=0, sub_workers=1) as node:
            sub = node.register(lambda tensors, scalars: None, name="noop")
            node.init()
            pid = os.fork()
            if pid == 0:                         # the fork: refused at once, never hangs
                signal.alarm(20)
                try:
                    node.run(lambda o: o.submit_sub(sub, []))
                    os._exit(3)
                except taskring.FailedPreconditionError as e:
                    os._exit(0 if "belongs to process" in str(e) else 4)
                except BaseException:
                    os._exit(5)
            deadline = time.monotonic() + 30
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() > deadline:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    raise SystemExit("the fork's node.run hung")
                time.sleep(0.05)
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
            counts = node.run(lambda o: o.submit_sub(sub, []))      # the owner's node still works
            assert counts["completed"] == 1, counts
    """, timeout=60)
