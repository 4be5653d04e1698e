"""Upstream's Python spellings a port meets (issue 34 item 4, docs/python.md "Porting from upstream"):
the orch function's (orch, args, cfg) form, orch.scope(), handle[chip] as a KeyError, and the
Worker-level chip memory calls outside a run. Each case runs in a fresh interpreter (init forks)."""

import textwrap

import numpy as np
import pytest
import taskring

import fresh_interpreter

PRELUDE = textwrap.dedent("""
    import warnings
    import numpy as np
    import pytest
    import taskring
    warnings.simplefilter("ignore", RuntimeWarning)   # the generic-BLAS advice, if any
    VEC = taskring.Callable.workload("vector")
""")


def run_case(body: str, timeout: int = 120):
    return fresh_interpreter.run_case(PRELUDE, body, timeout)


def test_the_orch_function_takes_upstreams_three_argument_form_or_the_orchestrator_alone():
    run_case("""
        with taskring.NodeWorker(chips=1) as node:
            vec = node.register(VEC)
            node.init()
            a, b, f = node.shared_array(64), node.shared_array(64), node.shared_array(64)
            a[:], b[:] = 2, 3
            seen = []
            def orch3(o, args, cfg):                      # upstream: Worker.run(orch_fn, args, cfg)
                seen.append((args, cfg))
                o.submit_next_level(vec, [(a, taskring.INPUT), (b, taskring.INPUT),
                                          (args["out"], taskring.OUTPUT_EXISTING)], worker=0)
            counts = node.run(orch3, {"out": f}, "cfg-token")
            assert counts["completed"] == 1 and (f == 47).all() and seen == [({"out": f}, "cfg-token")]
            node.submit(orch3, {"out": f}).wait()         # cfg defaults to None
            assert seen[-1][1] is None
            node.run(lambda o, *rest: seen.append(rest), 1, 2)
            assert seen[-1] == (1, 2)
            node.run(lambda o: seen.append("one"))        # taskring's one-argument form
            assert seen[-1] == "one"
            with pytest.raises(taskring.InvalidArgumentError, match="takes one argument .*args and cfg"):
                node.run(lambda o: None, {"x": 1})
            with pytest.raises(taskring.InvalidArgumentError, match="takes 2 positional"):
                node.run(lambda o, args: None)
            with pytest.raises(taskring.InvalidArgumentError, match="must be callable"):
                node.run(5)
            assert node.run(lambda o: None)["submitted"] == 0   # the worker is still usable
    """)


def test_the_orch_functions_form_is_read_from_its_code_without_inspect_unless_it_is_wrapped(monkeypatch):
    # inspect.signature cost ~5 us per run (the empty run's 2 -> 8 us); a plain function or lambda is
    # read from its code object, anything else (a functools.wraps wrapper, a partial, a callable
    # object) still through inspect, which follows __wrapped__ / __signature__.
    import functools
    from taskring import node as tn

    def no_inspect(*_a, **_k):
        raise AssertionError("inspect.signature was called for a plain function")

    def f3(o, args, cfg=None):
        return (o, args, cfg)

    def one(o):
        return o

    with monkeypatch.context() as m:
        m.setattr(tn.inspect, "signature", no_inspect)
        f1 = lambda o: None  # noqa: E731
        assert tn._orch_call("submit", f1, None, None) is f1
        assert tn._orch_call("submit", f3, "A", "C")("orch") == ("orch", "A", "C")
        assert tn._orch_call("submit", lambda o, *rest: rest, 1, 2)("orch") == (1, 2)
        with pytest.raises(taskring.InvalidArgumentError, match="takes 2 positional"):
            tn._orch_call("submit", lambda o, args: None, None, None)
        with pytest.raises(taskring.InvalidArgumentError, match="takes one argument .*args and cfg"):
            tn._orch_call("submit", one, 1, None)

    @functools.wraps(one)
    def wrapper(*a):  # inspect reads one's (o) through __wrapped__: the one-argument form
        return one(*a)

    assert tn._orch_call("submit", wrapper, None, None) is wrapper
    assert tn._orch_call("submit", functools.partial(f3, args="P"), None, None)("orch") == ("orch", "P", None)


def test_orch_scope_is_a_context_manager_that_closes_its_scope_on_an_exception_too():
    run_case("""
        with taskring.NodeWorker(chips=1) as node:
            vec = node.register(VEC)
            node.init()
            a, b, f = node.shared_array(64), node.shared_array(64), node.shared_array(64)
            a[:], b[:] = 2, 3
            def orch(o):
                with o.scope() as s:
                    assert s is o
                    o.submit_next_level(vec, [(a, taskring.INPUT), (b, taskring.INPUT),
                                              (f, taskring.OUTPUT_EXISTING)], worker=0)
                with pytest.raises(ValueError):
                    with o.scope():
                        raise ValueError("inside")
                # Both scopes are closed: one more scope_end has nothing to end.
                with pytest.raises(taskring.FailedPreconditionError, match="scope_end without a matching"):
                    o.scope_end()
            assert node.run(orch)["completed"] == 1 and (f == 47).all()
    """)


def test_a_domain_handle_indexed_by_a_non_member_raises_key_error():
    run_case("""
        from taskring import CommBufferSpec
        with taskring.NodeWorker(chips=2) as node:
            node.register(taskring.Callable.comm())
            node.init()
            def orch(o):
                with o.allocate_domain(name="tp", workers=[0], window_size=4096,
                                       buffers=[CommBufferSpec("s", "float32", 16, 64)]) as tp:
                    assert tp[0].domain_rank == 0
                    with pytest.raises(KeyError) as e:               # upstream's exception
                        tp[1]
                    assert isinstance(e.value, taskring.NotFoundError)  # and taskring's
                    assert str(e.value) == "NOT_FOUND: CommDomainHandle('tp'): chip 1 is not a member (members: [0])"
            node.run(orch)
    """)


def test_worker_level_chip_memory_calls_work_outside_a_run():
    run_case("""
        with taskring.NodeWorker(chips=2) as node:
            vec = node.register(VEC)
            node.init()
            n = 128
            a, b, f = node.shared_array(n), node.shared_array(n), node.shared_array(n)
            a[:] = np.arange(n)
            b[:] = 3
            wa = node.alloc_child_tensor(1, [n], np.float32)       # upstream's Worker-level spelling
            assert (wa.worker_id, wa.shape, wa.nbytes, wa.freed) == (1, (n,), 4 * n, False)
            wo = node.alloc_child_tensor(1, [n], np.float32)
            node.copy_to(wa, a)
            node.run(lambda o: o.submit_next_level(vec, [(wa, taskring.INPUT), (b, taskring.INPUT),
                                                         (wo, taskring.OUTPUT_EXISTING)], worker=1))
            node.copy_from(f, wo, nbytes=2 * n, dst_offset=0, src_offset=0)   # the first half only
            s = np.arange(n // 2) + 3.0
            assert (f[: n // 2] == (s + 1) * (s + 2) + s).all() and (f[n // 2:] == 0).all()
            node.free(wa)
            node.free(wo)
            assert wa.freed and wo.freed
            with pytest.raises(taskring.FailedPreconditionError):
                node.copy_to(wa, a)
            with pytest.raises(taskring.OutOfRangeError, match="chip 7 is not in"):
                node.alloc_child_tensor(7, [4], np.float32)
    """)


def test_tensor_transfer_h2d_on_an_input_array_is_the_staging_and_anything_else_is_refused(tmr_worker, orch_one_task):
    copy = taskring.Callable.from_library(orch_one_task, {0: "copy"})
    src = np.arange(32, dtype=np.float32)
    dst = np.zeros_like(src)
    tmr_worker.run(copy, [taskring.Tensor(src, taskring.INPUT, transfer=taskring.TensorTransfer.H2D),
                          (dst, taskring.OUTPUT_EXISTING)])
    np.testing.assert_array_equal(dst, src)
    with pytest.raises(taskring.UnimplementedError, match="transfer=NONE for a ndarray tagged INPUT: sim stages"):
        taskring.Tensor(src, taskring.INPUT, transfer=taskring.TensorTransfer.NONE)
    with pytest.raises(taskring.UnimplementedError, match="transfer=H2D for a ndarray tagged INOUT"):
        taskring.Tensor(src, taskring.INOUT, transfer=taskring.TensorTransfer.H2D)
    with pytest.raises(ValueError):
        taskring.Tensor(src, taskring.INPUT, transfer=7)
